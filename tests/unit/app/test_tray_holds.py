"""Skip next and snooze from the tray's menu and from a heads-up notification's buttons,
offscreen, on the real engine and store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtWidgets import QMenu, QToolBar

from domi_desktop.platform.notify import Notice
from domi_desktop.ui import heads_up, sleep_action
from domi_desktop.ui.tray import TrayApp
from tests.unit.app.test_tray_menu import action, texts, tray  # noqa: F401  (the fixture)


def report_menu(app: TrayApp) -> QMenu:
    app.engine.reload()  # type: ignore[attr-defined]  # the engine's picture, then the menu
    app.rebuild_menu()
    found = next(a for a in app.menu.actions() if a.text().startswith("Rate-limit report"))
    sub = found.menu()
    assert sub is not None
    return sub


def test_skip_next_from_the_menu_reaches_the_store_and_can_be_undone(tray: TrayApp) -> None:  # noqa: F811
    action(report_menu(tray), "Skip next").trigger()
    hold = tray.host.service.schedule(1).policies.hold
    assert hold is not None and hold.skip and hold.due > datetime.now(UTC)
    sub = report_menu(tray)
    assert "Undo skip" in texts(sub) and "Skip next" not in texts(sub)
    action(sub, "Undo skip").trigger()
    assert tray.host.service.schedule(1).policies.hold is None


def test_a_notification_s_snooze_button_moves_the_next_run_an_hour(tray: TrayApp) -> None:  # noqa: F811
    tray.notifier.acted.emit(heads_up.SNOOZE, 1)
    hold = tray.host.service.schedule(1).policies.hold
    assert hold is not None and hold.until == hold.due + timedelta(hours=1)
    tray.notifier.acted.emit(heads_up.SKIP, 1)
    skipped = tray.host.service.schedule(1).policies.hold
    assert skipped is not None and skipped.skip and skipped.due == hold.due
    tray.notifier.acted.emit("something else", 1)  # not ours: ignored
    tray.notifier.acted.emit(heads_up.SKIP, None)
    assert tray.host.service.schedule(1).policies.hold == skipped


def test_the_schedules_window_skips_and_snoozes_the_selected_schedule(tray: TrayApp) -> None:  # noqa: F811
    window = tray.main_window
    window.ensure_loaded()
    assert not window.acts["skip"].isEnabled()  # nothing selected
    window.select(1)
    assert window.acts["skip"].isEnabled() and window.acts["snooze"].isEnabled()
    toolbar = [a.objectName() for a in window.findChild(QToolBar, "toolbar").actions()]  # type: ignore[union-attr]
    assert toolbar.index("action-skip") == toolbar.index("action-toggle") + 1
    window.acts["skip"].trigger()
    hold = tray.host.service.schedule(1).policies.hold
    assert hold is not None and hold.skip
    tray.engine.reload()  # type: ignore[attr-defined]
    window.refresh()
    row = next(r for r in range(window.model.rowCount()) if window.model.schedule_at(r).id == 1)
    shown = window.model.data(window.model.index(row, 2))
    assert str(shown).startswith("skipping ")
    window.acts["snooze"].trigger()
    snoozed = tray.host.service.schedule(1).policies.hold
    assert snoozed is not None and snoozed.until is not None


def test_sleep_when_done_is_armed_from_the_menu_said_and_cancelled_from_its_notification(
    tray: TrayApp,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[bool] = []
    told: list[Notice] = []
    # Never the real engine here: with nothing running it would put this machine to sleep.
    monkeypatch.setattr(tray.host.engine, "sleep_when_done", asked.append)
    monkeypatch.setattr(tray.notifier, "notify", told.append)
    tray.rebuild_menu()
    entry = action(tray.menu, "When the running jobs finish: sleep")
    assert entry.isCheckable() and not entry.isChecked()
    entry.trigger()
    assert asked == [True] and tray.sleep_when_done.armed
    (notice,) = told
    assert notice.buttons == ((sleep_action.CANCEL, "Cancel"),)
    tray.notifier.acted.emit(sleep_action.CANCEL, None)
    assert asked == [True, False] and not tray.sleep_when_done.armed
