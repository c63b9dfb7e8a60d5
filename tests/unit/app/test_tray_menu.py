"""The tray app's menu and main window, offscreen (no tray here: the main window stands in)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from domi_desktop.app.gui import connect
from domi_desktop.events import FireEvent, LateFire, WakeDecided
from domi_desktop.model import CommandAction, Trigger, WakeReason
from domi_desktop.platform.notify import Notice, Notifier
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.notices import late_notice
from domi_desktop.ui.tray import TrayApp
from domi_desktop.ui.tray_menu import MENU_SCHEDULES
from tests.support.engine import running_engine


@pytest.fixture
def tray(qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrayApp]:
    monkeypatch.setenv("TZ", "Europe/Riga")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    now = datetime.now(UTC)
    with Store.open(tmp_path / "data", now=now) as store:
        store.create_schedule("Rate-limit report", "0 9 * * 1-5", "Europe/Riga",
                              CommandAction(argv=(sys.executable, "-c", "pass")), now=now)  # fmt: skip
        store.create_schedule("Every minute", "* * * * *", "UTC",
                              CommandAction(argv=(sys.executable, "-c", "pass")), now=now)  # fmt: skip
        with running_engine(store, secrets=MemorySecretStore()) as engine:
            app = TrayApp(qapp, engine.handle)
            connect(app, engine.handle)
            app.engine = engine  # type: ignore[attr-defined]
            yield app
            app.close()


def texts(menu: QMenu) -> list[str]:
    return [action.text() for action in menu.actions() if not action.isSeparator()]


def action(menu: QMenu, text: str) -> QAction:
    return next(a for a in menu.actions() if a.text() == text)


def test_the_menu_lists_schedules_soonest_first_with_their_next_fire(tray: TrayApp) -> None:
    tray.rebuild_menu()
    entries = texts(tray.menu)
    assert entries[0].startswith("Every minute · ")
    assert entries[1].startswith("Rate-limit report · ") and entries[1].endswith("09:00")
    assert entries[2:] == [
        "Schedules…", "New schedule…", "Pause all", "When the running jobs finish: sleep",
        "History…", "Timeline…", "Settings…", "Quit",
    ]  # fmt: skip
    sub = tray.menu.actions()[1].menu()
    assert sub is not None
    assert texts(sub) == ["Run now", "Skip next", "Snooze 1 hour", "Pause", "Edit…", "History…"]


def test_the_timeline_opens_from_the_menu_and_the_schedules_window(tray: TrayApp) -> None:
    from domi_desktop.ui.timeline.window import TimelineWindow

    tray.rebuild_menu()
    action(tray.menu, "Timeline…").trigger()
    opened = tray._windows["timeline"]
    assert isinstance(opened, TimelineWindow) and opened.isVisible()
    assert [lane.name for lane in opened.view._data.lanes] == [  # type: ignore[union-attr]
        "Rate-limit report", "Every minute",
    ]  # fmt: skip
    opened.close()
    tray.main_window.acts["timeline"].trigger()  # the Schedules window's button: the same one
    assert tray._windows["timeline"] is opened and opened.isVisible()
    due = datetime.now(UTC)
    tray.on_event(
        FireEvent(schedule_id=1, run_id=1, name="Rate-limit report", tz="Europe/Riga", due=due,
                  fired_at=due, trigger=Trigger.scheduled, late=False, missed_count=0)
    )  # fmt: skip
    assert opened._soon.isActive()  # an open Timeline reads again shortly
    opened.close()


def test_pause_and_resume_from_the_menu(tray: TrayApp, qtbot: Any) -> None:
    tray.main_window.ensure_loaded()
    tray.rebuild_menu()
    sub = tray.menu.actions()[1].menu()
    assert sub is not None
    action(sub, "Pause").trigger()
    assert not tray.host.store.get_schedule(1).enabled

    def paused_entry() -> QAction:
        tray.rebuild_menu()  # from the engine's picture, once it has planned without it
        return next(a for a in tray.menu.actions() if a.text().startswith("Rate-limit report"))

    qtbot.waitUntil(lambda: paused_entry().text() == "Rate-limit report · paused")
    paused = paused_entry()
    sub = paused.menu()
    assert sub is not None
    action(sub, "Resume").trigger()
    assert tray.host.store.get_schedule(1).enabled


def test_pause_all_is_a_checkable_toggle(tray: TrayApp) -> None:
    tray.rebuild_menu()
    action(tray.menu, "Pause all").trigger()
    assert tray.host.engine.state.paused
    tray.rebuild_menu()
    assert action(tray.menu, "Pause all").isChecked()


def test_pause_all_is_recorded_as_one_pause_from_on_to_off(tray: TrayApp, qtbot: Any) -> None:
    store = tray.host.store
    assert isinstance(store, Store)
    now, far = datetime.now(UTC), timedelta(days=1)

    def ends() -> list[datetime | None]:
        return [pause.end for pause in store.pauses(now - far, now + far)]

    tray.rebuild_menu()
    action(tray.menu, "Pause all").trigger()
    qtbot.waitUntil(lambda: ends() == [None], timeout=10_000)
    tray.rebuild_menu()
    action(tray.menu, "Pause all").trigger()  # off again: the same pause, ended
    qtbot.waitUntil(lambda: len(ends()) == 1 and ends()[0] is not None, timeout=10_000)


def test_run_now_from_the_menu_records_a_manual_run(
    tray: TrayApp, qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    tray.rebuild_menu()
    sub = tray.menu.actions()[0].menu()
    assert sub is not None
    looks: list[str] = []
    look = tray.update_look
    monkeypatch.setattr(tray, "update_look", lambda: (look(), looks.append(tray.state)))
    action(sub, "Run now").trigger()
    # The run's id comes back from the recorder, which never makes the GUI wait for the disk;
    # the icon is looked at again once it is on record.
    qtbot.waitUntil(lambda: looks != [], timeout=10_000)  # type: ignore[attr-defined]
    runs = tray.host.store.runs()
    assert len(runs) == 1 and runs[0].trigger.value == "manual"


def test_a_long_list_is_cut_to_the_soonest_with_a_way_to_all(tray: TrayApp) -> None:
    now = datetime.now(UTC)
    for i in range(MENU_SCHEDULES + 5):
        tray.host.store.create_schedule(
            f"job {i}", "0 3 * * *", "UTC", CommandAction(argv=("true",)), now=now
        )
    tray.engine.reload()  # type: ignore[attr-defined]
    tray.main_window.refresh()
    tray.rebuild_menu()
    schedules = [a for a in tray.menu.actions() if a.menu() is not None]
    assert len(schedules) == MENU_SCHEDULES
    assert f"All {MENU_SCHEDULES + 7} schedules…" in texts(tray.menu)


def test_paused_schedules_follow_the_scheduled_ones_without_loading_the_window(
    tray: TrayApp,
) -> None:
    now = datetime.now(UTC)
    for i in range(MENU_SCHEDULES + 3):
        job = tray.host.store.create_schedule(
            f"paused {i:02}", "0 3 * * *", "UTC", CommandAction(argv=("true",)), now=now
        )
        tray.host.store.set_enabled(job.id, False, now)
    tray.engine.reload()  # type: ignore[attr-defined]
    tray.rebuild_menu()
    schedules = [a.text() for a in tray.menu.actions() if a.menu() is not None]
    assert schedules[0].startswith("Every minute · ")
    assert schedules[1].startswith("Rate-limit report · ")
    assert schedules[2:] == [f"paused {i:02} · paused" for i in range(MENU_SCHEDULES - 2)]
    assert f"All {MENU_SCHEDULES + 5} schedules…" in texts(tray.menu)
    assert not tray.main_window.model.loaded


def test_without_a_tray_the_main_window_opens_and_lists_everything(tray: TrayApp) -> None:
    assert not QSystemTrayIcon.isSystemTrayAvailable()  # offscreen has none
    tray.show()
    assert tray.main_window.isVisible()
    assert tray.main_window.proxy.rowCount() == 2
    assert tray.main_window.acts["quit"].text() == "Quit"
    assert tray.main_window.acts["pause_all"].isCheckable()


def test_the_late_notification_text(tray: TrayApp) -> None:
    due = datetime(2024, 6, 5, 6, 0, tzinfo=UTC)  # 09:00 in Riga
    fire = FireEvent(schedule_id=1, run_id=1, name="Rate-limit report", tz="Europe/Riga", due=due,
                     fired_at=due + timedelta(hours=1, minutes=2), trigger=Trigger.catch_up,
                     late=True, missed_count=2)  # fmt: skip
    notice = late_notice([fire], due)
    assert notice.title == "Rate-limit report ran late"
    assert notice.body == "due 09:00, ran 10:02 · 2 earlier runs skipped"
    i18n.set_language("zh")
    try:
        assert late_notice([fire], due).title == "Rate-limit report 迟到运行"
        assert i18n.missing() == set()
    finally:
        i18n.set_language("en")


def test_the_icon_shows_running_then_attention_until_the_history_is_seen(
    tray: TrayApp, qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = tray.host.store.create_schedule(
        "Broken",
        "0 9 * * *",
        "UTC",
        CommandAction(
            argv=(sys.executable, "-c", "import time; time.sleep(1); raise SystemExit(2)")
        ),
        now=datetime.now(UTC),
    )
    tray.update_look()
    assert tray.state == "idle"
    assert "Next: Every minute · " in tray.tray.toolTip()
    tray.run_now(failing.id)
    qtbot.waitUntil(lambda: tray.state == "running", timeout=10_000)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: tray.state == "attention", timeout=10_000)  # type: ignore[attr-defined]
    assert "Attention" in tray.tray.toolTip()
    tray.open_history(None)
    qtbot.waitUntil(lambda: tray.state == "idle", timeout=10_000)  # type: ignore[attr-defined]
    tray._windows["history"].close()


def test_a_second_update_touches_only_what_changed(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    tray.rebuild_menu()
    before = [a.menu() for a in tray.menu.actions() if a.menu() is not None]
    first = next(a for a in tray.menu.actions() if a.text().startswith("Every minute"))
    schedule_id = next(s.id for s in tray.host.store.list_schedules() if s.name == "Every minute")
    engine = tray.host.engine
    monkeypatch.setattr(engine, "state", replace(engine.state, running={schedule_id: (1,)}))
    tray.rebuild_menu()
    after = [a.menu() for a in tray.menu.actions() if a.menu() is not None]
    assert after == before  # the same submenus: nothing cleared and rebuilt
    assert first.text() == "▶ Every minute · running"
    sub = first.menu()
    assert sub is not None and texts(sub) == [
        "Run now", "Stop", "Skip next", "Snooze 1 hour", "Pause", "Edit…", "History…",
    ]  # fmt: skip


def test_late_notification_times_carry_the_day_when_not_today(tray: TrayApp) -> None:
    due = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)  # Monday 12:00 in Riga
    fire = FireEvent(schedule_id=1, run_id=1, name="Rate-limit report", tz="Europe/Riga", due=due,
                     fired_at=datetime(2024, 6, 4, 7, 19, tzinfo=UTC), trigger=Trigger.catch_up,
                     late=True, missed_count=0)  # fmt: skip
    tuesday = datetime(2024, 6, 4, 8, 0, tzinfo=UTC)
    assert late_notice([fire], tuesday).body == "due Mon 12:00, ran Tue 10:19"


# The offscreen platform cannot raise a window: not the app's to fix.
@pytest.mark.qt_log_ignore("This plugin does not support")
def test_an_open_history_offers_a_schedule_made_meanwhile(tray: TrayApp) -> None:
    tray.open_history(None)
    made = tray.host.service.create_schedule(
        {"name": "Made later", "expr": "0 4 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": ["true"]}}
    )  # fmt: skip
    assert tray._history is not None
    assert tray._history.schedule_filter.findData(made["id"]) > 0


# The offscreen platform cannot raise a window: not the app's to fix.
@pytest.mark.qt_log_ignore("This plugin does not support")
def test_a_fire_tells_an_open_history_how_many_dues_it_skipped(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    tray.open_history(None)
    history = tray._history
    assert history is not None
    told: list[tuple[int, int, int]] = []
    monkeypatch.setattr(history, "run_fired", lambda *args: told.append(args))
    due = datetime(2024, 6, 5, 6, 0, tzinfo=UTC)
    tray.on_event(FireEvent(schedule_id=1, run_id=7, name="Backup", tz="UTC", due=due,
                            fired_at=due, trigger=Trigger.catch_up, late=True, missed_count=2))  # fmt: skip
    assert told == [(1, 7, 2)]


class Recorded(Notifier):
    def __init__(self) -> None:
        super().__init__()
        self.notices: list[Notice] = []

    def notify(self, notice: Notice) -> None:
        self.notices.append(notice)


def late_fire(tray: TrayApp, due: datetime) -> LateFire:
    schedule = tray.host.store.list_schedules()[0]
    return LateFire(schedule.id, schedule.name, schedule.tz, due, due + timedelta(hours=1), 2)


def test_a_wake_whose_claims_are_slow_to_reach_the_disk_is_told_without_them(
    tray: TrayApp, qtbot: Any
) -> None:
    recorded = Recorded()
    tray.notifier.close()  # the tray's own, replaced: its thread ends with it
    tray.notifier = recorded
    due = datetime(2024, 6, 3, 6, 0, tzinfo=UTC)
    tray.on_event(WakeDecided(WakeReason.resume, (late_fire(tray, due),)))
    qtbot.waitUntil(lambda: recorded.notices != [], timeout=10_000)  # no on_wake came
    (notice,) = recorded.notices
    assert notice.title == "Rate-limit report ran late" and notice.run_id is None
    plan = WakePlan(due, (), None, due)
    tray.on_wake(plan, WakeReason.resume)  # the claims, at last: said once, not twice
    assert len(recorded.notices) == 1


def test_a_wake_claimed_in_time_is_told_with_its_run(tray: TrayApp) -> None:
    recorded = Recorded()
    tray.notifier.close()  # the tray's own, replaced: its thread ends with it
    tray.notifier = recorded
    due = datetime(2024, 6, 3, 6, 0, tzinfo=UTC)
    fire = late_fire(tray, due)
    tray.on_event(WakeDecided(WakeReason.resume, (fire,)))
    tray.on_event(
        FireEvent(fire.schedule_id, 41, fire.name, fire.tz, due, fire.fired_at, Trigger.catch_up,
                  late=True, missed_count=2)
    )  # fmt: skip
    tray.on_wake(WakePlan(due, (), None, due), WakeReason.resume)
    (notice,) = recorded.notices
    assert notice.run_id == 41  # a click opens that run
