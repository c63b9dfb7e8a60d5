"""The tray app: the host's scheduler behind a tray icon, a menu, windows and notifications."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QMessageBox,
    QSystemTrayIcon,
    QWidget,
)

from domi_desktop.errors import DomiError
from domi_desktop.events import Event, FireEvent, RunFinished, RunWaiting
from domi_desktop.frontdoor.service import METHODS
from domi_desktop.model import WakeReason
from domi_desktop.platform.notify import Notice, Notifier, notifier_for
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.ui import heads_up
from domi_desktop.ui.announcer import Announcer
from domi_desktop.ui.backend import AppBackend
from domi_desktop.ui.heads_up import HeadsUp
from domi_desktop.ui.hold_actions import add_hold_actions
from domi_desktop.ui.i18n import register, set_language, tr
from domi_desktop.ui.icons import load_icon
from domi_desktop.ui.paced import Paced
from domi_desktop.ui.sleep_action import SleepWhenDoneAction
from domi_desktop.ui.tray_host import TrayHost
from domi_desktop.ui.tray_look import last_line, look
from domi_desktop.ui.tray_menu import SchedulesMenu

if TYPE_CHECKING:
    from domi_desktop.ui.history.window import HistoryWindow
    from domi_desktop.ui.main_window import MainWindow
    from domi_desktop.ui.timeline.window import TimelineWindow

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
        "Run failed: {name}": "运行失败：{name}",
        "Run succeeded: {name}": "运行成功：{name}",
        "All schedules paused": "所有计划已暂停",
        "running": "运行中",
        "Running: {names}": "正在运行：{names}",
        "Schedules…": "计划…",
        "Stop": "停止",
        "{count} jobs are running": "{count} 个任务正在运行",
        "1 job is running": "1 个任务正在运行",
        "Quitting stops them; they are recorded as interrupted. Quit anyway?": (
            "退出会停止它们，并记录为被中断。仍要退出吗？"
        ),
        "Open history": "打开历史",
        "Attention: {what}": "需要注意：{what}",
        "a late or failed run": "有迟到或失败的运行",
        "All {count} schedules…": "全部 {count} 个计划…",
        "Skip next": "跳过下一次",
        "Undo skip": "撤销跳过",
        "Snooze 1 hour": "推迟 1 小时",
    },
)

MENU_INTERVAL = 1.0
"""Seconds between two rebuilds of the menu while events keep coming (a catch-up)."""
LOOK_INTERVAL = 0.25
"""Seconds between two redraws of the icon and tooltip while events keep coming."""


class TrayApp(QObject):
    def __init__(
        self, app: QApplication, host: AppBackend, tray: QSystemTrayIcon | None = None
    ) -> None:
        """``tray``: an icon already shown while the app started (``app.gui``), taken over."""
        super().__init__()
        self.app = app
        self.host = host
        self.attention = False
        self.state = "idle"
        """What the icon shows: idle, running, paused, or attention (a late or failed run)."""
        self._windows: dict[str, QWidget] = {}
        self._history: HistoryWindow | None = None
        self._timeline: TimelineWindow | None = None
        self.icons = {
            name: load_icon(name) for name in ("idle", "running", "paused", "attention", "template")
        }
        self.menu = QMenu()
        self.tray = self._make_tray(tray)
        self._schedules_menu = SchedulesMenu(self.menu, host, self)
        # The menu is rebuilt when what it shows changes, not when it opens: a menu rebuilt in
        # aboutToShow keeps its old size (and a D-Bus menu its old layout) on that first open.
        self._menu = Paced(self._schedules_menu.update, MENU_INTERVAL, self)
        self._look = Paced(self._draw_look, LOOK_INTERVAL, self)
        self._main_window: MainWindow | None = None
        self.notifier: Notifier = notifier_for(self.tray, tr("Open history"), self)
        self.notifier.clicked.connect(self.open_run)
        self.notifier.acted.connect(self._acted)
        self._announcer = Announcer(
            self._notify, lambda: self.settings, self._attend, self, self._last_line
        )
        self.sleep_when_done = SleepWhenDoneAction(lambda: self.host.engine, self._notify)
        self._heads_up = HeadsUp(
            lambda: self.host.engine.state, self._notify, lambda: self.settings.notify_late, self
        )
        self.settings: Any = self._load_settings()
        self._tray_host = TrayHost(self)
        self._tray_host.appeared.connect(self._tray_appeared)

    def close(self) -> None:
        """On the way out: no more menu rebuilds, notifications or windows."""
        self._menu.stop()
        self._look.stop()
        self._heads_up.stop()
        self.notifier.close()
        # Hidden, not closed: closing an editor with edits would ask "discard?" after the user
        # already chose Quit.
        for window in list(self._windows.values()):
            window.hide()
        if self._main_window is not None:
            self._main_window.hide()
        self.tray.hide()

    @property
    def has_tray(self) -> bool:
        return self.tray.isVisible()

    # -- showing -------------------------------------------------------------------------------

    def show(self) -> None:
        watching = self._tray_host.watch()
        if self._tray_host.present():
            self._show_tray()
        else:
            log.info("no system tray on this desktop: the main window stands in for it%s",
                     "; watching for one" if watching else "")  # fmt: skip
            self.main_window.set_tray_missing(True)
            self.show_main_window()

    def _show_tray(self) -> None:
        # The Schedules window's rows are made when it first opens, not here: at 10,000
        # schedules they are seconds of start-up and tens of MB the tray alone never uses.
        self.tray.show()
        self.rebuild_menu()
        self.update_look()

    def _make_tray(self, tray: QSystemTrayIcon | None = None) -> QSystemTrayIcon:
        if tray is None:
            tray = QSystemTrayIcon(self.icons["idle"], self)
        else:
            tray.setParent(self)
        tray.setContextMenu(self.menu)
        tray.activated.connect(self._activated)
        return tray

    def _tray_appeared(self) -> None:
        """A panel came after the app: the icon moves into it, and the window may close."""
        if self.tray.isVisible() or not self._tray_host.present():
            return
        log.info("a system tray appeared: the icon is shown there")
        # Qt picks a tray icon's kind (StatusNotifierItem or XEmbed) when the icon is made: one
        # made while there was no watcher would never register with it.
        old, self.tray = self.tray, self._make_tray()
        old.deleteLater()
        self._show_tray()
        if self._main_window is not None:
            self._main_window.set_tray_missing(False)

    @property
    def main_window(self) -> MainWindow:
        """Built when first wanted: a tray at rest never showing it keeps its 6 MB of widgets, and
        not importing it (with the editor's modules and their Qt classes) ~5 MB more."""
        if self._main_window is None:
            from domi_desktop.ui.main_window import MainWindow

            self._main_window = MainWindow(self.host, self)
            add_hold_actions(self._main_window, self)
        return self._main_window

    def show_main_window(self) -> None:
        self.main_window.ensure_loaded()
        self.main_window.show()
        self.main_window.raise_()
        self.main_window.activateWindow()

    def update_look(self) -> None:
        self._look.now()

    def _draw_look(self) -> None:
        self.state, tooltip = look(self.host.engine.state, self.attention)
        icon = "template" if sys.platform == "darwin" and self.state == "idle" else self.state
        self.tray.setIcon(self.icons[icon])
        self.tray.setToolTip(tooltip)

    def look_changed(self) -> None:
        """Update the icon and tooltip soon: a few times a second during a burst."""
        self._look.ask()

    # -- the menu ------------------------------------------------------------------------------

    def menu_changed(self) -> None:
        """Rebuild the menu soon, once for a burst of events: a rebuild (20 submenus, exported
        over D-Bus) takes tens of milliseconds, so during a catch-up at most one a second."""
        self._menu.ask()

    def rebuild_menu(self) -> None:
        """The 20 soonest fires from the planner's cache, at most once a second (``menu_changed``)."""
        self._menu.now()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_main_window()

    # -- actions -------------------------------------------------------------------------------

    def run_now(self, schedule_id: int) -> None:
        self.host.engine.run_now(schedule_id, self._started)

    def _started(self, outcome: int | Exception) -> None:
        if isinstance(outcome, Exception):
            log.warning("run now: %s", outcome)
        self.update_look()

    def stop_schedule(self, schedule_id: int) -> None:
        for run_id in self.host.engine.state.running.get(schedule_id, ()):
            self.host.engine.stop_run(run_id)

    def set_enabled(self, schedule_id: int, enabled: bool) -> None:
        self.host.service.set_enabled({"id": schedule_id}, enabled)
        self.schedule_changed(schedule_id)

    def skip_next(self, schedule_id: int, undo: bool = False) -> None:
        self._hold("schedule.skip", {"id": schedule_id, "undo": undo})

    def snooze(self, schedule_id: int, seconds: float) -> None:
        self._hold("schedule.snooze", {"id": schedule_id, "seconds": seconds})

    def _acted(self, key: str, schedule_id: object) -> None:
        """A button of a notification (``ui.heads_up``, ``ui.sleep_action``)."""
        if self.sleep_when_done.acted(key) or not isinstance(schedule_id, int):
            return
        if key == heads_up.SKIP:
            self.skip_next(schedule_id)
        elif key == heads_up.SNOOZE:
            self.snooze(schedule_id, 3600.0)

    def _hold(self, method: str, params: dict[str, Any]) -> None:
        """Skip or snooze through the service, as the CLI does; a refusal (a one-off that is
        done) is logged, the menu having offered what was true a moment ago."""
        try:
            METHODS[method](self.host.service, params)
        except DomiError as error:
            log.warning("%s: %s", method, error)
            return
        self.schedule_changed(int(params["id"]))

    def set_paused(self, paused: bool) -> None:
        self.host.engine.set_paused(paused)
        if self._main_window is not None:
            self._main_window.engine_changed()
        self.menu_changed()
        self.update_look()

    def quit(self) -> bool:
        """Quit, after asking when jobs run (quitting stops them); False if the user stays."""
        running = self.host.engine.state.running_runs()
        if running:
            box = QMessageBox(
                QMessageBox.Icon.Warning,
                tr("domi-desktop"),
                tr("1 job is running")
                if len(running) == 1
                else tr("{count} jobs are running", count=len(running)),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                self._main_window
                if self._main_window is not None and self._main_window.isVisible()
                else None,
            )
            box.setObjectName("quitWhileRunning")
            box.setInformativeText(
                tr("Quitting stops them; they are recorded as interrupted. Quit anyway?")
            )
            box.setDefaultButton(QMessageBox.StandardButton.Cancel)
            if box.exec() != QMessageBox.StandardButton.Yes:
                return False
        self.app.quit()
        return True

    def open_editor(self, schedule_id: int | None, *, fresh_copy: bool = False) -> None:
        """The editor on ``schedule_id`` (a new schedule when None). A ``fresh_copy`` (made by
        Duplicate) is deleted again when the editor closes without a save."""
        from domi_desktop.ui.editor.dialog import EditorDialog
        from domi_desktop.ui.editor.monitor_status import MonitorQueries

        dialog = EditorDialog(
            self.host.service,
            secret_names=self._secret_names,
            secrets=self.host.secrets,
            schedule_id=schedule_id,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if isinstance(engine := self.host.engine, MonitorQueries):
            dialog.monitoring.attach(
                engine, schedule_id, lambda: self.open_settings(heartbeat=True)
            )
        if fresh_copy and schedule_id is not None:
            saved: list[int] = []
            dialog.saved.connect(saved.append)
            dialog.finished.connect(lambda _: self._drop_copy(schedule_id, bool(saved)))
        self._keep("editor", dialog)

    def _drop_copy(self, schedule_id: int, saved: bool) -> None:
        if saved:
            return
        try:
            self.host.service.delete_schedule({"id": schedule_id})
        except DomiError as error:
            log.warning("the unsaved copy %s stays: %s", schedule_id, error)
        self.schedule_changed(schedule_id)

    def open_history(self, schedule_id: int | None) -> None:
        self._history_window().show_schedule(schedule_id)
        self._keep("history", self._history_window())
        log.info("history window opened%s", f" for schedule {schedule_id}" if schedule_id else "")

    def open_timeline(self) -> None:
        """The machine's story and every due's, a week at a time; a due clicked opens History."""
        from domi_desktop.ui.timeline.data import TimelineReader
        from domi_desktop.ui.timeline.window import TimelineWindow

        store = self.host.store
        if self._timeline is None and isinstance(store, TimelineReader):
            self._timeline = TimelineWindow(store, self.open_run)
        if self._timeline is not None:
            self._keep("timeline", self._timeline)

    def open_run(self, run_id: int | None) -> None:
        """A notification was clicked: History on that run, its log one click away."""
        window = self._history_window()
        if run_id is None or not window.show_run(run_id):
            window.show_schedule(None)
        self._keep("history", window)
        log.info("history window opened from a notification (run %s)", run_id)

    def _history_window(self) -> HistoryWindow:
        from domi_desktop.ui.history.window import HistoryWindow

        self.attention = False
        self.update_look()
        if self._history is None:
            self._history = HistoryWindow(self.host.store)
        return self._history

    def open_settings(self, *, heartbeat: bool = False) -> None:
        """``heartbeat``: at the machine heartbeat (from an editor's Monitoring box)."""
        from domi_desktop.platform.autostart import autostart_for_platform
        from domi_desktop.ui.settings import SettingsDialog

        dialog = SettingsDialog(self.settings, autostart=autostart_for_platform())
        dialog.changed.connect(self._apply_settings)
        self._keep("settings", dialog)
        if heartbeat:
            dialog.heartbeat.key.setFocus()

    def _keep(self, key: str, window: QWidget) -> None:
        self._windows[key] = window
        # A window deleted on close must not be touched again (quit would raise "already deleted").
        window.destroyed.connect(lambda *_: self._forget(key, window))
        window.show()
        window.raise_()
        window.activateWindow()

    def _forget(self, key: str, window: QWidget) -> None:
        if self._windows.get(key) is window:
            del self._windows[key]

    def _secret_names(self) -> list[str]:
        try:
            return self.host.secrets.names()
        except DomiError as error:
            log.warning("cannot list secrets: %s", error)
            return []

    # -- settings ------------------------------------------------------------------------------

    def _settings_path(self) -> Path:
        from domi_desktop.frontdoor.settings import settings_path

        return settings_path(self.host.store.data_dir)

    def _load_settings(self) -> Any:
        from domi_desktop.frontdoor.settings import load_settings

        settings = load_settings(self._settings_path())
        set_language(settings.language)
        return settings

    def _apply_settings(self, settings: Any) -> None:
        from domi_desktop.frontdoor.settings import save_settings

        save_settings(self._settings_path(), settings)
        self.settings = settings
        set_language(settings.language)
        # The tray's own words are no window's: its menu and tooltip are made again.
        self.rebuild_menu()
        self.update_look()

    # -- events (all after the runtime changed its state) --------------------------------------

    def schedule_changed(self, schedule_id: int) -> None:
        if self._main_window is not None:
            self._main_window.schedule_changed(schedule_id)
        if self._history is not None:
            self._history.schedules_changed()
        self.menu_changed()
        self.update_look()

    def store_changed(self) -> None:
        if self._main_window is not None and self._main_window.model.loaded:
            self._main_window.refresh()
        if self._history is not None:
            self._history.schedules_changed()
        self.menu_changed()

    def on_events(self, events: list[Event]) -> None:
        for event in events:
            self.on_event(event)

    def engine_changed(self) -> None:
        """A new picture of the engine: what is running, waiting and next."""
        if self._main_window is not None:
            self._main_window.engine_changed()
        self.menu_changed()
        self.look_changed()

    def on_event(self, event: Event) -> None:
        self._announcer.on_event(event)
        if isinstance(event, FireEvent | RunFinished | RunWaiting):
            if isinstance(event, FireEvent) and self._history is not None:
                self._history.run_fired(event.schedule_id, event.run_id, event.missed_count)
            elif self._history is not None:
                self._history.run_changed(event.run_id)
            if self._main_window is not None:
                self._main_window.on_event(event)
            if self._timeline is not None:
                self._timeline.runs_changed()
            self.menu_changed()
        self.look_changed()

    def _last_line(self, run_id: int) -> str | None:
        return last_line(self.host.store, run_id)

    def _notify(self, notice: Notice) -> None:
        self.notifier.notify(notice)  # looked up here: a replaced ``notifier`` is the one told

    def _attend(self) -> None:
        self.attention = True
        self.look_changed()

    def on_wake(self, plan: WakePlan, reason: WakeReason) -> None:
        """The wake's notice (``Announcer``); the times in the windows and the menu move on."""
        if reason == WakeReason.tz_change and self._history is not None:
            self._history.texts_changed()  # its times are written on the local clock
        self._announcer.wake(plan, reason)
        self.sleep_when_done.woke(reason)
        if self._main_window is not None:
            self._main_window.engine_changed()
        self.menu_changed()
        self.look_changed()
