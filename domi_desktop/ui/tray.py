"""The tray app: the host's scheduler behind a tray icon, a menu, windows and notifications."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QSystemTrayIcon,
    QWidget,
)

from domi_desktop.cron import zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import Event, FireEvent, RunStatus, StoreProblem, WakeReason
from domi_desktop.platform.notify import Notice, Notifier, notifier_for
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.ui.backend import AppBackend
from domi_desktop.ui.i18n import person_time, register, set_language, tr
from domi_desktop.ui.icons import load_icon
from domi_desktop.ui.main_window import MainWindow

if TYPE_CHECKING:
    from domi_desktop.ui.history import HistoryWindow

log = logging.getLogger("domi_desktop")

register(
    "zh",
    {
        "domi-desktop": "domi-desktop",
        "Run now": "立即运行",
        "Pause": "暂停",
        "Resume": "恢复",
        "Edit…": "编辑…",
        "History…": "历史…",
        "New schedule…": "新建计划…",
        "Pause all": "全部暂停",
        "Settings…": "设置…",
        "Quit": "退出",
        "No schedules yet": "还没有计划",
        "paused": "已暂停",
        "Next: {name} · {when}": "下一次：{name} · {when}",
        "Nothing scheduled": "没有待运行的计划",
        "{count} running": "{count} 个正在运行",
        "{name} ran late": "{name} 迟到运行",
        "due {due}, ran {ran}": "应于 {due}，实际 {ran}",
        "{count} earlier runs skipped": "跳过了之前的 {count} 次",
        "1 earlier run skipped": "跳过了之前的 1 次",
        "{count} schedules caught up after sleep": "睡眠后补运行了 {count} 个计划",
        "{name} failed": "{name} 运行失败",
        "{name} succeeded": "{name} 运行成功",
        "Open history": "打开历史",
        "Schedules": "计划",
        "Name": "名称",
        "Cron": "Cron",
        "Zone": "时区",
        "Next fire": "下一次",
        "New…": "新建…",
        "Edit": "编辑",
        "History": "历史",
        "Settings": "设置",
        "Attention: {what}": "需要注意：{what}",
        "a late or failed run": "有迟到或失败的运行",
        "All {count} schedules…": "全部 {count} 个计划…",
    },
)

MENU_SCHEDULES = 20


def _zone_or_local(tz: str) -> tzinfo:
    try:
        return zone_for(tz)
    except DomiError:
        return zone_for("local")


class TrayApp(QObject):
    def __init__(self, app: QApplication, host: AppBackend) -> None:
        super().__init__()
        self.app = app
        self.host = host
        self.attention = False
        self.state = "idle"
        """What the icon shows: idle, running, or attention (a late or failed run not yet seen)."""
        self._late: list[FireEvent] = []
        self._windows: dict[str, QWidget] = {}
        self._history: HistoryWindow | None = None
        self.icons = {
            name: load_icon(name) for name in ("idle", "running", "attention", "template")
        }
        self.tray = QSystemTrayIcon(self.icons["idle"], self)
        self.menu = QMenu()
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.tray.setContextMenu(self.menu)
        self.tray.activated.connect(self._activated)
        self.main_window = MainWindow(host, self)
        self.notifier: Notifier = notifier_for(self.tray, tr("Open history"))
        self.notifier.clicked.connect(lambda: self.open_history(None))
        self.settings = self._load_settings()

    # -- showing -------------------------------------------------------------------------------

    def show(self) -> None:
        self.rebuild_menu()
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray.show()
            self.update_look()
        else:
            log.info("no system tray on this desktop: the main window stands in for it")
            self.app.setQuitOnLastWindowClosed(False)
            self.show_main_window()

    def show_main_window(self) -> None:
        self.main_window.refresh()
        self.main_window.show()
        self.main_window.raise_()
        self.main_window.activateWindow()

    def update_look(self) -> None:
        running = self.host.running_runs()
        self.state = "attention" if self.attention else "running" if running else "idle"
        icon = "template" if sys.platform == "darwin" and self.state == "idle" else self.state
        self.tray.setIcon(self.icons[icon])
        lines = [tr("domi-desktop")]
        upcoming = self._next_fire()
        lines.append(
            tr("Next: {name} · {when}", name=upcoming[0], when=upcoming[1])
            if upcoming
            else tr("Nothing scheduled")
        )
        if running:
            lines.append(tr("{count} running", count=len(running)))
        if self.attention:
            lines.append(tr("Attention: {what}", what=tr("a late or failed run")))
        self.tray.setToolTip("\n".join(lines))

    def _next_fire(self) -> tuple[str, str] | None:
        # Called on every event: the planner's cache answers without touching the database.
        soonest = self.host.soonest()
        if soonest is None:
            return None
        upcoming, schedule = soonest
        return schedule.name, person_time(upcoming, schedule.tz)

    # -- the menu ------------------------------------------------------------------------------

    def rebuild_menu(self) -> None:
        """Rebuilt each time it opens, so next fires are always current (Vorta's habit)."""
        self.menu.clear()
        schedules = self.host.runs.list_schedules()
        if not schedules:
            empty = self.menu.addAction(tr("No schedules yet"))
            empty.setEnabled(False)
        fires = {s.id: self.host.next_fire(s.id) for s in schedules}
        # The soonest first; a menu of hundreds helps nobody (the main window lists them all).
        ordered = sorted(
            schedules,
            key=lambda s: (fires[s.id] is None, fires[s.id] or datetime.max.replace(tzinfo=UTC)),
        )
        for schedule in ordered[:MENU_SCHEDULES]:
            upcoming = fires[schedule.id]
            when = person_time(upcoming, schedule.tz) if upcoming else tr("paused")
            sub = self.menu.addMenu(f"{schedule.name} · {when}")
            sub.setObjectName(f"schedule-{schedule.id}")
            self._add(sub, tr("Run now"), partial(self.run_now, schedule.id))
            if schedule.enabled:
                self._add(sub, tr("Pause"), partial(self.set_enabled, schedule.id, False))
            else:
                self._add(sub, tr("Resume"), partial(self.set_enabled, schedule.id, True))
            self._add(sub, tr("Edit…"), partial(self.open_editor, schedule.id))
            self._add(sub, tr("History…"), partial(self.open_history, schedule.id))
        if len(schedules) > MENU_SCHEDULES:
            more = len(schedules) - MENU_SCHEDULES
            self._add(
                self.menu, tr("All {count} schedules…", count=len(schedules)), self.show_main_window
            )
            log.debug(
                "menu shows %d of %d schedules (%d more)", MENU_SCHEDULES, len(schedules), more
            )
        self.menu.addSeparator()
        self._add(self.menu, tr("New schedule…"), lambda: self.open_editor(None))
        pause = self._add(
            self.menu,
            tr("Pause all"),
            lambda: self.host.set_paused(not self.host.paused),
        )
        pause.setCheckable(True)
        pause.setChecked(self.host.paused)
        self._add(self.menu, tr("History…"), lambda: self.open_history(None))
        self._add(self.menu, tr("Settings…"), self.open_settings)
        self.menu.addSeparator()
        self._add(self.menu, tr("Quit"), self.app.quit)

    def _add(self, menu: QMenu, text: str, slot: Callable[[], object]) -> QAction:
        action = menu.addAction(text)
        # triggered(bool) would land in a lambda's default argument: drop it.
        action.triggered.connect(lambda *_checked: slot())
        return action

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_main_window()

    # -- actions -------------------------------------------------------------------------------

    def run_now(self, schedule_id: int) -> None:
        try:
            self.host.run_now(schedule_id)
        except DomiError as error:
            log.warning("run now: %s", error)
        self.update_look()

    def set_enabled(self, schedule_id: int, enabled: bool) -> None:
        self.host.service.set_enabled({"id": schedule_id}, enabled)
        self.main_window.refresh()
        self.update_look()

    def open_editor(self, schedule_id: int | None) -> None:
        from domi_desktop.ui.editor import EditorDialog

        dialog = EditorDialog(
            self.host.service, secret_names=self._secret_names, schedule_id=schedule_id
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(self._saved)
        self._keep("editor", dialog)

    def _saved(self, _schedule_id: int) -> None:
        self.main_window.refresh()
        self.update_look()

    def open_history(self, schedule_id: int | None) -> None:
        from domi_desktop.ui.history import HistoryWindow

        self.attention = False
        self.update_look()
        window = self._history
        if window is None:
            window = self._history = HistoryWindow(self.host.runs)
        window.show_schedule(schedule_id)
        self._keep("history", window)
        log.info("history window opened%s", f" for schedule {schedule_id}" if schedule_id else "")

    def open_settings(self) -> None:
        from domi_desktop.platform.autostart import autostart_for_platform
        from domi_desktop.ui.settings import SettingsDialog

        dialog = SettingsDialog(self.settings, autostart=autostart_for_platform())
        dialog.changed.connect(self._apply_settings)
        self._keep("settings", dialog)

    def _keep(self, key: str, window: QWidget) -> None:
        self._windows[key] = window
        window.show()
        window.raise_()
        window.activateWindow()

    def _secret_names(self) -> list[str]:
        try:
            return self.host.secrets.names()
        except DomiError as error:
            log.warning("cannot list secrets: %s", error)
            return []

    # -- settings ------------------------------------------------------------------------------

    def _settings_path(self) -> Path:
        from domi_desktop.api.settings import settings_path

        return settings_path(self.host.data_dir)

    def _load_settings(self) -> Any:
        from domi_desktop.api.settings import load_settings

        settings = load_settings(self._settings_path())
        set_language(settings.language)
        return settings

    def _apply_settings(self, settings: Any) -> None:
        from domi_desktop.api.settings import save_settings

        save_settings(self._settings_path(), settings)
        self.settings = settings
        set_language(settings.language)

    # -- events --------------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        if isinstance(event, StoreProblem):
            self.attention = True
            self.notifier.notify(
                Notice(tr("Cannot write to the database"), event.message, warning=True)
            )
        elif isinstance(event, FireEvent):
            if event.late and event.skipped is None:
                self._late.append(event)
        else:
            if event.status in (RunStatus.failed, RunStatus.timed_out):
                self.attention = True
                if self.settings.notify_failures:
                    self.notifier.notify(
                        Notice(
                            tr("{name} failed", name=event.name),
                            event.reason or event.status.value,
                            warning=True,
                        )
                    )
            elif event.status is RunStatus.succeeded and self.settings.notify_successes:
                self.notifier.notify(Notice(tr("{name} succeeded", name=event.name), ""))
            if self._history is not None:
                self._history.refresh()
        self.update_look()

    def on_wake(self, plan: WakePlan, _reason: WakeReason) -> None:
        """All catch-ups of one wake in one notification."""
        late, self._late = self._late, []
        if not late:
            return
        self.attention = True
        self.update_look()
        if self.settings.notify_late:
            self.notifier.notify(late_notice(late, plan.now))


def late_notice(fires: list[FireEvent], now: datetime) -> Notice:
    """ "Rate-limit report ran late" / "due 09:00, ran 10:02 · 2 earlier runs skipped"."""

    def line(fire: FireEvent) -> str:
        # In the schedule's own zone: "due 09:00" is the time the user wrote.
        zone = _zone_or_local(fire.tz)
        assert fire.due is not None  # only scheduled fires are late
        due = fire.due.astimezone(zone)
        ran = fire.fired_at.astimezone(zone)
        text = tr("due {due}, ran {ran}", due=f"{due:%H:%M}", ran=f"{ran:%H:%M}")
        if fire.missed_count == 1:
            text += " · " + tr("1 earlier run skipped")
        elif fire.missed_count > 1:
            text += " · " + tr("{count} earlier runs skipped", count=fire.missed_count)
        return text

    if len(fires) == 1:
        return Notice(tr("{name} ran late", name=fires[0].name), line(fires[0]))
    title = tr("{count} schedules caught up after sleep", count=len(fires))
    return Notice(title, "\n".join(f"{fire.name}: {line(fire)}" for fire in fires))
