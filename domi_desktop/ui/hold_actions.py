"""The Schedules window's "Skip next" and "Snooze 1 hour": added to its toolbar and its Schedule
menu from here (the window's own module is at its size limit), acting on the selected schedules
through the tray app, as the tray's submenu does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolBar

from domi_desktop.scheduler import oneoff
from domi_desktop.ui.i18n import tr
from domi_desktop.ui.main_words import ACTION_TEXTS

if TYPE_CHECKING:
    from domi_desktop.ui.main_window import MainWindow

SNOOZE_SECONDS = 3600.0


class HoldActions(Protocol):
    def skip_next(self, schedule_id: int, undo: bool = False) -> None: ...
    def snooze(self, schedule_id: int, seconds: float) -> None: ...


def add_hold_actions(window: MainWindow, app: HoldActions) -> dict[str, QAction]:
    """Make the two actions, put them after "Pause" in the toolbar and the Schedule menu, and
    keep them enabled for a selection they apply to."""

    def holdable() -> list[int]:
        return [s.id for s in window.selected() if s.enabled and not oneoff.done(s)]

    def skip() -> None:
        for schedule_id in holdable():
            app.skip_next(schedule_id)

    def snooze() -> None:
        for schedule_id in holdable():
            app.snooze(schedule_id, SNOOZE_SECONDS)

    made: dict[str, QAction] = {}
    for key, text, slot in (
        ("skip", tr(ACTION_TEXTS["skip"]), skip),
        ("snooze", tr(ACTION_TEXTS["snooze"]), snooze),
    ):
        action = QAction(text, window)
        action.setObjectName(f"action-{key}")
        action.triggered.connect(lambda *_, run=slot: run())
        made[key] = action
    after = window.acts["toggle"]
    bar = window.findChild(QToolBar, "toolbar")
    places: list[QToolBar | QMenu] = [] if bar is None else [bar]
    places += [m for m in window.menuBar().findChildren(QMenu) if after in m.actions()]
    for place in places:
        following = _after(place.actions(), after)
        place.insertActions(following, list(made.values()))  # type: ignore[arg-type]

    def update() -> None:
        on = bool(holdable())
        for action in made.values():
            action.setEnabled(on)

    window.table.selectionModel().selectionChanged.connect(lambda *_: update())
    update()
    window.acts.update(made)
    return made


def _after(actions: list[QAction], anchor: QAction) -> QAction | None:
    """The action after ``anchor`` (``None``: the end), where the new ones go in front of."""
    index = actions.index(anchor) if anchor in actions else len(actions) - 1
    return actions[index + 1] if index + 1 < len(actions) else None
