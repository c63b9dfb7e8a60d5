"""The tray's menu: the 20 soonest schedules, each with its actions, then the app's own.

Only what changed is touched: during a catch-up the same schedules stay the soonest and mostly
their titles (running, next fire) change, and clearing and refilling 20 submenus (a hundred
actions, exported over D-Bus) every second was most of the GUI thread's time in a burst.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from domi_desktop.model import Schedule
from domi_desktop.scheduler import oneoff
from domi_desktop.ui.backend import AppBackend
from domi_desktop.ui.i18n import language, person_time, tr
from domi_desktop.ui.sentence import schedule_sentence
from domi_desktop.ui.sleep_action import SleepWhenDoneAction

MENU_SCHEDULES = 20
SNOOZE = 3600.0
"""Seconds "Snooze 1 hour" moves the next run."""


class MenuActions(Protocol):
    """What the menu's entries do (the tray app)."""

    def run_now(self, schedule_id: int) -> None: ...
    def stop_schedule(self, schedule_id: int) -> None: ...
    def set_enabled(self, schedule_id: int, enabled: bool) -> None: ...
    def skip_next(self, schedule_id: int, undo: bool = False) -> None: ...
    def snooze(self, schedule_id: int, seconds: float) -> None: ...
    def open_editor(self, schedule_id: int | None) -> object: ...
    def open_history(self, schedule_id: int | None) -> None: ...
    def open_timeline(self) -> None: ...
    def show_main_window(self) -> None: ...
    def set_paused(self, paused: bool) -> None: ...
    @property
    def sleep_when_done(self) -> SleepWhenDoneAction: ...
    def open_settings(self) -> object: ...
    def quit(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class _Entry:
    schedule: Schedule
    title: str
    running: bool


class SchedulesMenu:
    def __init__(self, menu: QMenu, host: AppBackend, actions: MenuActions) -> None:
        self.menu = menu
        self._host = host
        self._actions = actions
        self._layout: tuple[list[int], bool, str] | None = None
        """What the menu was last built for: its schedules in order, "Pause all", the language."""
        self._entries: list[_Entry] = []
        self._submenus: dict[int, QMenu] = {}
        self._everything: QAction | None = None

    def update(self) -> None:
        """The soonest fires from the planner's cache (no schedule decoded), then paused ones."""
        engine = self._host.engine.state
        running = engine.running
        shown: list[tuple[Schedule, datetime | None]] = [
            (schedule, when) for when, schedule in engine.soonest[:MENU_SCHEDULES]
        ]
        service = self._host.service
        total = service.schedule_count()
        if len(shown) < MENU_SCHEDULES and total > len(shown):
            # Paused schedules are not in the planner: after the scheduled ones.
            paused = service.paused_schedules(MENU_SCHEDULES - len(shown))
            shown += [(schedule, None) for schedule in paused]
        entries = [
            _Entry(schedule, _title(schedule, upcoming, schedule.id in running),
                   schedule.id in running)
            for schedule, upcoming in shown
        ]  # fmt: skip
        everything = (
            tr("All {count} schedules…", count=total) if total > len(shown) else tr("Schedules…")
        )
        layout = (
            [entry.schedule.id for entry in entries],
            engine.paused,
            language(),
        )
        if layout == self._layout and self._everything is not None:
            self._touch_up(entries)
            self._everything.setText(everything)
        else:
            self._rebuild(entries, everything)
            self._layout = layout
        self._entries = entries

    def _touch_up(self, entries: list[_Entry]) -> None:
        for entry, before in zip(entries, self._entries, strict=True):
            sub = self._submenus[entry.schedule.id]
            if (entry.running, entry.schedule.enabled, entry.schedule.policies.hold) != (
                before.running,
                before.schedule.enabled,
                before.schedule.policies.hold,
            ):
                self._fill(sub, entry)
            if entry.title != before.title:
                sub.setTitle(entry.title)

    def _rebuild(self, entries: list[_Entry], everything: str) -> None:
        app, menu = self._actions, self.menu
        menu.clear()
        self._submenus = {}
        if not entries:
            menu.addAction(tr("No schedules yet")).setEnabled(False)
        for entry in entries:
            sub = menu.addMenu(entry.title)
            sub.setObjectName(f"schedule-{entry.schedule.id}")
            self._submenus[entry.schedule.id] = sub
            self._fill(sub, entry)
        self._everything = add(menu, everything, app.show_main_window)
        menu.addSeparator()
        add(menu, tr("New schedule…"), lambda: app.open_editor(None))
        paused = self._host.engine.state.paused
        pause = add(menu, tr("Pause all"), lambda: app.set_paused(not paused))
        pause.setCheckable(True)
        pause.setChecked(paused)
        sleep = app.sleep_when_done
        done = add(
            menu, tr("When the running jobs finish: sleep"), lambda: sleep.set(not sleep.armed)
        )
        done.setCheckable(True)
        done.setChecked(sleep.armed)
        add(menu, tr("History…"), lambda: app.open_history(None))
        add(menu, tr("Timeline…"), app.open_timeline)
        add(menu, tr("Settings…"), app.open_settings)
        menu.addSeparator()
        add(menu, tr("Quit"), app.quit)

    def _fill(self, sub: QMenu, entry: _Entry) -> None:
        app, schedule_id = self._actions, entry.schedule.id
        sub.clear()
        sentence = schedule_sentence(entry.schedule)
        if sentence is not None:
            sub.addAction(sentence).setEnabled(False)
            sub.addSeparator()
        add(sub, tr("Run now"), partial(app.run_now, schedule_id))
        if entry.running:
            add(sub, tr("Stop"), partial(app.stop_schedule, schedule_id))
        if entry.schedule.enabled and not oneoff.done(entry.schedule):
            hold = oneoff.live_hold(entry.schedule)
            if hold is not None and hold.skip:
                add(sub, tr("Undo skip"), partial(app.skip_next, schedule_id, True))
            else:
                add(sub, tr("Skip next"), partial(app.skip_next, schedule_id))
            add(sub, tr("Snooze 1 hour"), partial(app.snooze, schedule_id, SNOOZE))
        if entry.schedule.enabled:
            add(sub, tr("Pause"), partial(app.set_enabled, schedule_id, False))
        else:
            add(sub, tr("Resume"), partial(app.set_enabled, schedule_id, True))
        add(sub, tr("Edit…"), partial(app.open_editor, schedule_id))
        add(sub, tr("History…"), partial(app.open_history, schedule_id))


def _title(schedule: Schedule, upcoming: datetime | None, running: bool) -> str:
    if running:
        return f"▶ {schedule.name} · {tr('running')}"
    if not schedule.enabled:
        return f"{schedule.name} · {tr('paused')}"
    when = person_time(upcoming, schedule.tz) if upcoming else ""
    return f"{schedule.name} · {when}".rstrip(" ·")


def add(menu: QMenu, text: str, slot: Callable[[], object]) -> QAction:
    action = menu.addAction(text)
    # triggered(bool) would land in a lambda's default argument: drop it.
    action.triggered.connect(lambda *_checked: slot())
    return action
