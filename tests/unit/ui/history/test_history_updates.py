"""History as runs come and go while it is open: row updates coalesced, never a reload per run;
opening on one run; times on the local clock with the schedule's own beside them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from domi_desktop.cron import set_local_resolver
from domi_desktop.model import CommandAction, FireClaim, RunStatus
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.history import window as history_module
from domi_desktop.ui.history.model import PAGE_SIZE, Column, RunsModel
from domi_desktop.ui.history.texts import format_time
from domi_desktop.ui.history.window import HistoryWindow

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
ACTION = CommandAction(argv=("report",))
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
SETTLED_MS = 60_000
"""How long a wait for the window to catch up may take: generous, for loaded machines (a test
waits for what it checks; the figures are ``bench/wake_bench.py``'s, with History open)."""


@pytest.fixture(autouse=True)
def berlin() -> Iterator[None]:
    set_local_resolver(lambda: ZoneInfo("Europe/Berlin"))
    yield
    set_local_resolver(None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        yield opened


def open_history(qtbot: QtBot, store: Store) -> HistoryWindow:
    window = HistoryWindow(store)
    qtbot.addWidget(window)
    return window


class Counted:
    """How often the model was reset or fully refreshed, and how often rows were updated."""

    def __init__(self, model: RunsModel, monkeypatch: pytest.MonkeyPatch) -> None:
        self.resets = 0
        self.refreshes = 0
        self.updates = 0
        model.modelReset.connect(self._reset)
        refresh, update = model.refresh, model.update_runs

        def counted_refresh() -> None:
            self.refreshes += 1
            refresh()

        def counted_update(ids: object) -> None:
            self.updates += 1
            update(ids)  # type: ignore[arg-type]

        monkeypatch.setattr(model, "refresh", counted_refresh)
        monkeypatch.setattr(model, "update_runs", counted_update)

    def _reset(self) -> None:
        self.resets += 1


def test_a_burst_of_a_thousand_ended_runs_costs_a_handful_of_updates(
    qtbot: QtBot, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedule = store.create_schedule("busy", "* * * * *", "Europe/Berlin", ACTION, now=NOW)
    history = open_history(qtbot, store)
    history.show()
    counted = Counted(history.model, monkeypatch)
    resized: list[int] = []
    monkeypatch.setattr(history.table, "resizeColumnsToContents", lambda: resized.append(1))
    began = time.perf_counter()
    ids = []
    for minute in range(1000):
        run_id = store.record_manual_run(schedule.id, NOW + timedelta(minutes=minute))
        store.start_run(run_id, NOW + timedelta(minutes=minute))
        store.finish_run(
            run_id,
            status=RunStatus.failed if minute % 10 == 0 else RunStatus.succeeded,
            finished_at=NOW + timedelta(minutes=minute, seconds=5),
            exit_code=1 if minute % 10 == 0 else 0,
        )
        ids.append(run_id)
        history.run_changed(run_id)
        QApplication.processEvents()
    # A batch each interval: the last ones arrive after the burst (at most all of them), and
    # the count (read at most once a second) after the last batch.
    qtbot.waitUntil(lambda: history.model.rowCount() == 1000, timeout=SETTLED_MS)
    qtbot.waitUntil(lambda: history.run_count.text() == "1,000 runs", timeout=SETTLED_MS)
    elapsed = time.perf_counter() - began
    print(f"1,000 run.finished: {counted.updates} row updates, {elapsed:.2f} s in total")
    assert counted.resets == 0
    assert counted.refreshes == 0
    # The store writes above take most of the time; at most one update per interval runs.
    assert counted.updates <= max(3, int(elapsed * 1000 / history_module.UPDATE_INTERVAL_MS) + 2)
    assert len(resized) <= 1
    assert [history.model.run_at(row).id for row in range(3)] == ids[::-1][:3]
    assert history.model.index(999, 3).data() == "failed"


def test_a_thousand_changes_arrive_newest_first_in_batches_a_few_times_a_second(
    qtbot: QtBot, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedule = store.create_schedule("busy", "* * * * *", "Europe/Berlin", ACTION, now=NOW)
    history = open_history(qtbot, store)
    counted = Counted(history.model, monkeypatch)
    ids = [
        store.record_manual_run(schedule.id, NOW + timedelta(minutes=minute))
        for minute in range(1000)
    ]
    inserted: list[tuple[int, int]] = []
    history.model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    history.runs_changed(ids)
    assert history.model.rowCount() == 0  # nothing yet: the timer has not fired
    qtbot.waitUntil(lambda: history.model.rowCount() > 0, timeout=SETTLED_MS)
    first = [history.model.run_at(row).id for row in range(history.model.rowCount())]
    assert first == sorted(ids, reverse=True)[: history_module.UPDATE_BATCH]  # the newest first
    began = time.monotonic()
    qtbot.waitUntil(lambda: history.model.rowCount() == 1000, timeout=SETTLED_MS)
    took = time.monotonic() - began
    batches = 1000 // history_module.UPDATE_BATCH
    assert (counted.updates, counted.resets, counted.refreshes) == (batches, 0, 0)
    # Each batch is one insertion of its rows (older runs go in below the ones shown).
    batch = history_module.UPDATE_BATCH
    assert inserted == [(batch * n, batch * n + batch - 1) for n in range(batches)]
    # One batch each interval, never back to back (the interval is the timer's, not a sleep).
    assert took >= (batches - 1) * history_module.UPDATE_INTERVAL_MS / 1000 * 0.9


def test_a_run_that_leaves_the_filter_is_removed_and_one_that_enters_is_inserted(
    qtbot: QtBot, store: Store
) -> None:
    schedule = store.create_schedule("job", "* * * * *", "Europe/Berlin", ACTION, now=NOW)
    first = store.record_manual_run(schedule.id, NOW)
    second = store.record_manual_run(schedule.id, NOW + timedelta(minutes=1))
    history = open_history(qtbot, store)
    history.status_filter.setCurrentIndex(history.status_filter.findData("running"))
    assert history.model.rowCount() == 2
    store.start_run(second, NOW)
    store.finish_run(second, status=RunStatus.succeeded, finished_at=NOW, exit_code=0)
    third = store.record_manual_run(schedule.id, NOW + timedelta(minutes=2))
    history.runs_changed([second, third])
    qtbot.waitUntil(lambda: history.model.run_at(0).id == third, timeout=SETTLED_MS)
    assert [history.model.run_at(row).id for row in range(history.model.rowCount())] == [
        third,
        first,
    ]


def test_show_run_opens_with_that_run_selected_and_its_log_one_click_away(
    qtbot: QtBot, store: Store
) -> None:
    schedule = store.create_schedule("job", "* * * * *", "Europe/Berlin", ACTION, now=NOW)
    other = store.create_schedule("other", "* * * * *", "Europe/Berlin", ACTION, now=NOW)
    old = store.record_manual_run(schedule.id, NOW)
    for minute in range(PAGE_SIZE * 2):
        store.record_manual_run(schedule.id, NOW + timedelta(minutes=minute + 1))
    history = open_history(qtbot, store)
    history.show_schedule(other.id)
    history.status_filter.setCurrentIndex(history.status_filter.findData("succeeded"))
    assert history.show_run(old)
    assert history.isVisible()
    selected = history.selected_run()
    assert selected is not None and selected.id == old
    assert history.schedule_filter.currentData() == schedule.id
    assert history.status_filter.currentData() is None
    assert history.open_log_button.isEnabled()
    assert history.focusWidget() is history.open_log_button
    assert not history.show_run(999_999)  # deleted meanwhile: all runs, nothing selected


def test_times_are_local_with_the_schedule_clock_beside_them_when_it_differs(
    qtbot: QtBot, store: Store
) -> None:
    new_york = store.create_schedule("ny", "0 9 * * *", "America/New_York", ACTION, now=NOW)
    berlin = store.create_schedule("berlin", "0 9 * * *", "Europe/Berlin", ACTION, now=NOW)
    at = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    ny_run = store.record_manual_run(new_york.id, at)
    store.start_run(ny_run, at)
    berlin_run = store.record_manual_run(berlin.id, at)
    store.start_run(berlin_run, at)
    model = RunsModel(store)
    assert model.index(1, 2).data() == "Mon 2026-03-02 15:00 (09:00 New York)"
    assert model.index(0, 2).data() == "Mon 2026-03-02 15:00"
    assert format_time(at) == "Mon 2026-03-02 15:00"


def test_cells_are_written_afresh_for_another_local_zone_a_rename_and_a_language(
    qtbot: QtBot, store: Store
) -> None:
    schedule = store.create_schedule("report", "* * * * *", "UTC", ACTION, now=NOW)
    store.record_manual_run(schedule.id, NOW - timedelta(hours=1))  # row 1: an older run
    run_id = store.record_manual_run(schedule.id, NOW)
    store.start_run(run_id, NOW)
    history = open_history(qtbot, store)
    model = history.model

    def shown(column: int) -> str:
        return str(model.data(model.index(0, column)))

    assert shown(0) == model.data(model.index(1, 0)) == "report"
    assert "09:00" in shown(2)  # started 08:00 UTC, on a Berlin clock
    set_local_resolver(lambda: ZoneInfo("Asia/Tokyo"))
    assert "17:00" in shown(2)
    assert model.data(model.index(1, 0)) == "report"
    store.update_schedule(schedule.id, name="the report", now=NOW)
    history.run_changed(run_id)
    qtbot.waitUntil(lambda: shown(0) == "the report", timeout=SETTLED_MS)
    assert model.data(model.index(1, 0)) == "the report"  # a row the change did not touch
    i18n.set_language("zh")
    try:
        history.retranslate()
        assert shown(Column.trigger) == "手动"
    finally:
        i18n.set_language("en")


def test_a_wake_shows_its_skipped_rows_live_without_a_reload(
    qtbot: QtBot, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedule = store.create_schedule("report", "0 * * * *", "Europe/Berlin", ACTION, now=NOW)
    first = store.claim_fire(FireClaim(schedule.id, expected_last_due=NOW, due=NOW + HOUR,
                                       fired_at=NOW + HOUR))  # fmt: skip
    assert first is not None
    history = open_history(qtbot, store)
    history.show()
    history.table.selectRow(0)  # the user looks at the first run
    counted = Counted(history.model, monkeypatch)
    # The laptop slept three hours: the latest due runs late, the two before it are skipped.
    due = NOW + 4 * HOUR
    fired = store.claim_fire(FireClaim(
        schedule.id, expected_last_due=NOW + HOUR, due=due, fired_at=due + MINUTE, late=True,
        missed_count=2, skipped=(NOW + 2 * HOUR, NOW + 3 * HOUR),
    ))  # fmt: skip
    assert fired is not None
    history.run_fired(schedule.id, fired, 2)  # what the tray app passes on of the FireEvent
    model = history.model
    qtbot.waitUntil(lambda: model.rowCount() == 4, timeout=SETTLED_MS)
    statuses = [model.run_at(row).status for row in range(4)]
    assert statuses == [RunStatus.running, RunStatus.skipped, RunStatus.skipped, RunStatus.running]
    assert [model.run_at(row).due for row in (1, 2)] == [NOW + 3 * HOUR, NOW + 2 * HOUR]
    assert history.selected_run() is not None and history.selected_run().id == first  # kept
    assert counted.resets == counted.refreshes == 0
    qtbot.waitUntil(lambda: history.run_count.text() == "4 runs", timeout=SETTLED_MS)
