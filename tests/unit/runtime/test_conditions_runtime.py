"""Conditions at the runtime: they gate real jobs on a fake clock, with a fake condition
source and a fake sleep inhibitor; real SQLite, real processes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import (
    CommandAction,
    Conditions,
    NetworkState,
    OnDeadline,
    RunStatus,
    SystemState,
    Trigger,
)
from domi_desktop.store import Store
from tests.support.runtime import START, RuntimeHarness, harnesses

PY = sys.executable
BATTERY = SystemState(network=NetworkState.online, on_ac=False, battery_percent=40)
MAINS = SystemState(network=NetworkState.online, on_ac=True, battery_percent=40)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


@pytest.fixture
def make(store: Store) -> Iterator[Callable[..., RuntimeHarness]]:
    with harnesses(store, state=MAINS) as build:
        yield build


def cmd(script: str) -> CommandAction:
    return CommandAction(argv=(PY, "-c", script))


def marker_job(path: Path) -> CommandAction:
    return cmd(f"import pathlib; pathlib.Path({str(path)!r}).write_text('ran')")


# -- power -------------------------------------------------------------------------------------


def test_it_waits_on_battery_and_starts_within_2_s_of_the_charger_marked_late(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    marker = tmp_path / "ran"
    job = h.add("0 * * * *", marker_job(marker), conditions=Conditions(on_ac_power=True))
    h.start()
    h.loop.advance(timedelta(minutes=90))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting and run.reason == "waiting for the charger"
    assert not marker.exists() and h.kinds("run.waiting")
    h.source.change(MAINS)
    h.drain_until(marker.exists)  # on the change itself: the clock stands still while draining
    (started,) = h.kinds("schedule.fire")  # its start is told, as a fire's, for the windows
    assert started.run_id == run.id and started.late
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    run = h.store.get_run(run.id)
    assert run.status is RunStatus.succeeded and run.late and run.trigger is Trigger.scheduled
    assert run.reason == "started after waiting 30 minutes for the charger"
    assert run.due == datetime(2024, 6, 5, 11, 0, tzinfo=UTC)
    assert len(h.store.runs(schedule_id=job.id)) == 1


def test_a_waiting_run_wakes_the_scheduler_at_most_once_a_minute(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    h.add("0 11 * * *", marker_job(tmp_path / "ran"), conditions=Conditions(on_ac_power=True))
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.wakes.clear()
    h.loop.advance(timedelta(minutes=30))
    assert 25 <= len(h.wakes) <= 31


@pytest.mark.parametrize(
    ("on_deadline", "status"),
    [(OnDeadline.run, RunStatus.succeeded), (OnDeadline.skip, RunStatus.skipped)],
)
def test_with_a_deadline_and_no_charger_exactly_one_run_at_due_plus_the_deadline(
    make: Callable[..., RuntimeHarness], tmp_path: Path, on_deadline: OnDeadline, status: RunStatus
) -> None:
    h = make(BATTERY)
    conditions = Conditions(
        on_ac_power=True, wait_at_most=timedelta(hours=6, seconds=30), on_deadline=on_deadline
    )
    job = h.add("0 11 * * *", marker_job(tmp_path / "ran"), conditions=conditions)
    h.start()
    h.loop.advance(timedelta(hours=8))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is status
    ended = run.started_at if status is RunStatus.succeeded else run.finished_at
    assert ended is not None
    # Off the minute: the wake is the deadline's own, not the next minute's tick.
    deadline = datetime(2024, 6, 5, 17, 0, 30, tzinfo=UTC)
    assert abs((ended - deadline).total_seconds()) <= 1
    word = "ran anyway" if on_deadline is OnDeadline.run else "skipped"
    assert run.reason == f"{word} after waiting 6 hours 30 seconds for the charger"
    assert len(h.kinds("run.finished")) == 1


def test_unplugged_mid_run_stops_the_job_within_2_s_and_runs_it_once_more_on_power(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(MAINS)
    count = tmp_path / "count"
    script = (
        f"import pathlib, time\np = pathlib.Path({str(count)!r})\n"
        "n = int(p.read_text()) if p.exists() else 0\np.write_text(str(n + 1))\n"
        "time.sleep(0.2 if n else 300)"
    )
    job = h.add(
        "0 11 * * *", cmd(script), conditions=Conditions(on_ac_power=True, stop_if_lost=True)
    )
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.drain_until(count.exists)
    h.source.change(BATTERY)
    # Stopped on the change itself (the clock stands still while draining), not its 300 s end.
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    first, again = sorted(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert first.status is RunStatus.interrupted
    assert first.reason == "stopped: the charger was unplugged"
    assert again.status is RunStatus.waiting and again.resumed_from == first.id
    assert again.trigger is Trigger.resumed and again.due == first.due
    h.loop.advance(timedelta(minutes=5))
    assert h.store.get_run(again.id).status is RunStatus.waiting
    h.source.change(MAINS)
    h.drain_until(lambda: len(h.kinds("run.finished")) >= 2)
    assert h.store.get_run(again.id).status is RunStatus.succeeded
    assert count.read_text() == "2" and len(h.store.runs(schedule_id=job.id)) == 2


POLICIES = {
    "none": Conditions(),
    "charger": Conditions(on_ac_power=True),
    "battery 50": Conditions(min_battery_percent=50),
    "charger, stop": Conditions(on_ac_power=True, stop_if_lost=True),
    "charger, 1 h then skip": Conditions(
        on_ac_power=True, wait_at_most=timedelta(hours=1), on_deadline=OnDeadline.skip
    ),
}
LOW = SystemState(network=NetworkState.online, on_ac=False, battery_percent=20)
# policy, state at the due, state 10 minutes later -> the statuses after 2 hours
TABLE = [
    ("none", LOW, MAINS, [RunStatus.succeeded]),
    ("none", MAINS, LOW, [RunStatus.succeeded]),
    ("charger", LOW, MAINS, [RunStatus.succeeded]),
    ("charger", MAINS, LOW, [RunStatus.succeeded]),
    ("charger", LOW, LOW, [RunStatus.waiting]),
    ("battery 50", LOW, MAINS, [RunStatus.succeeded]),
    ("battery 50", BATTERY, LOW, [RunStatus.waiting]),
    ("battery 50", MAINS, LOW, [RunStatus.succeeded]),
    ("charger, stop", MAINS, LOW, [RunStatus.interrupted, RunStatus.waiting]),
    ("charger, stop", LOW, MAINS, [RunStatus.succeeded]),
    ("charger, 1 h then skip", LOW, LOW, [RunStatus.skipped]),
    ("charger, 1 h then skip", LOW, MAINS, [RunStatus.succeeded]),
]


@pytest.mark.parametrize(("policy", "at_due", "later", "expected"), TABLE)
def test_every_policy_against_a_power_change(
    make: Callable[..., RuntimeHarness],
    policy: str,
    at_due: SystemState,
    later: SystemState,
    expected: list[RunStatus],
) -> None:
    h = make(at_due)
    job = h.add("0 11 * * *", cmd("import time; time.sleep(1.0)"), conditions=POLICIES[policy])
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.drain_until(lambda: bool(h.store.runs(schedule_id=job.id)))
    h.loop.advance(timedelta(minutes=10))
    h.source.change(later)
    h.loop.advance(timedelta(hours=2))
    settled = [RunStatus.waiting, *[s for s in RunStatus if s.finished]]
    h.drain_until(lambda: all(s in settled for s in h.statuses(job)), timeout=15)
    assert h.statuses(job) == expected


# -- at most one waiting run per schedule ------------------------------------------------------


def test_five_dues_on_battery_end_as_one_run_and_four_skipped_rows_when_plugged_in(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    marker = tmp_path / "ran"
    job = h.add(
        "* * * * *", marker_job(marker),
        conditions=Conditions(on_ac_power=True, wait_at_most=timedelta(minutes=3)),
    )  # fmt: skip
    h.start()
    for _ in range(5):
        h.loop.advance(timedelta(minutes=1))
        assert h.statuses(job).count(RunStatus.waiting) == 1  # never a pile
    h.source.change(MAINS)
    h.drain_until(lambda: bool(h.kinds("run.finished")) and marker.exists())
    h.drain_until(lambda: RunStatus.succeeded in h.statuses(job))
    runs = list(reversed(h.store.runs(schedule_id=job.id)))
    assert [r.status for r in runs] == [RunStatus.skipped] * 4 + [RunStatus.succeeded]
    assert all("when a later due came" in (r.reason or "") for r in runs[:4])
    assert runs[-1].due == START + timedelta(minutes=5)  # the latest due is the one that ran
    assert runs[-1].reason == "started after waiting 0 seconds for the charger"


def test_a_failure_after_a_wait_is_the_same_error_whatever_the_wait(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make(BATTERY)
    job = h.add("*/5 * * * *", cmd("raise SystemExit(1)"), conditions=Conditions(on_ac_power=True))
    h.start()
    for minutes in (1, 4):  # waits of different lengths, the same failure after each
        h.source.change(BATTERY)
        h.loop.advance(timedelta(minutes=5))
        h.loop.advance(timedelta(minutes=minutes))
        before = len(h.kinds("run.finished"))
        h.source.change(MAINS)
        h.drain_until(lambda before=before: len(h.kinds("run.finished")) > before)
    failing = [e for e in h.kinds("schedule.alert") if e.notice == "failing"]
    assert len(failing) == 1, failing
    reasons = [r.reason for r in h.store.runs(schedule_id=job.id) if r.status is RunStatus.failed]
    assert len(set(reasons)) == 2  # the rows still say how long each waited
