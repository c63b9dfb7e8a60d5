"""Once inside a window, at the runtime: real SQLite and real jobs on a fake clock, with the fake
condition source of the conditions' tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from domi_desktop.model import Conditions, RunStatus, WakeReason, Window
from tests.support.runtime import RuntimeHarness
from tests.unit.runtime.test_conditions_runtime import (
    BATTERY,
    MAINS,
    make,
    marker_job,
    store,
)

__all__ = ["make", "store"]  # the fixtures, shared with the conditions' tests

NIGHT = Conditions(on_ac_power=True, window=Window(time(22), time(6)))


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2024, 6, day, hour, minute, tzinfo=UTC)


def test_a_nightly_run_waits_for_its_window_and_the_night_past_midnight_is_still_its_own(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    marker = tmp_path / "ran"
    job = h.add("@daily", marker_job(marker), conditions=NIGHT)
    h.runtime.start()
    h.loop.advance(at(6, 21) - h.clock.now())
    (first,) = h.store.runs(schedule_id=job.id)
    assert first.status is RunStatus.waiting and first.due == at(6, 0)
    assert first.reason == "waiting for the window 22:00-06:00"
    # On battery all evening; the next midnight's due comes while this night is still open.
    h.loop.advance(at(7, 1) - h.clock.now())
    assert not marker.exists()
    assert [r.status for r in h.store.runs(schedule_id=job.id)] == [RunStatus.waiting] * 2
    h.source.change(MAINS)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    ran = h.store.get_run(first.id)
    assert ran.status is RunStatus.succeeded and ran.due == at(6, 0)
    assert ran.started_at is not None and at(7, 1) <= ran.started_at < at(7, 6)
    # The next night's run still waits for its own window, on mains or not.
    second = next(r for r in h.store.runs(schedule_id=job.id) if r.id != first.id)
    assert h.store.get_run(second.id).status is RunStatus.waiting


def test_a_window_on_battery_all_night_is_skipped_at_its_end_saying_so(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    marker = tmp_path / "ran"
    job = h.add("@daily", marker_job(marker), conditions=NIGHT)
    h.runtime.start()
    h.loop.advance(at(7, 6, 2) - h.clock.now())
    first = min(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert first.status is RunStatus.skipped
    assert first.reason == "on battery the whole window"
    assert not marker.exists()


def test_a_window_slept_through_in_part_says_the_sleep_and_the_battery(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    job = h.add("@daily", marker_job(tmp_path / "ran"), conditions=NIGHT)
    h.runtime.start()
    h.loop.advance(at(6, 23) - h.clock.now())
    h.clock.sleep_machine(at(7, 3) - h.clock.now())
    h.runtime.driver.wake(WakeReason.resume)
    h.loop.advance(at(7, 6, 2) - h.clock.now())
    first = min(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert first.status is RunStatus.skipped
    assert first.reason is not None
    assert first.reason.startswith("asleep 23:")
    assert first.reason.endswith("-03:00, on battery the rest of the window")


def test_waking_past_midnight_after_a_day_asleep_still_runs_the_night_before(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    marker = tmp_path / "ran"
    job = h.add("@daily", marker_job(marker), conditions=NIGHT, last_due=at(5, 0))
    h.runtime.start()
    h.clock.sleep_machine(at(7, 3) - h.clock.now())  # asleep over the 6th's and 7th's midnights
    h.runtime.driver.wake(WakeReason.resume)
    h.loop.advance(timedelta(minutes=2))
    runs = sorted(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert [(r.due, r.status) for r in runs] == [
        (at(6, 0), RunStatus.waiting),
        (at(7, 0), RunStatus.waiting),
    ]
    h.source.change(MAINS)
    h.drain_until(marker.exists)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert h.store.get_run(runs[0].id).status is RunStatus.succeeded
    assert h.store.get_run(runs[1].id).status is RunStatus.waiting
