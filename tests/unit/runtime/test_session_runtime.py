"""Session triggers at the runtime: real SQLite, real processes, a fake clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.model import (
    Conditions,
    OnDeadline,
    Overlap,
    RunStatus,
    SessionTriggers,
    SkipReason,
    SystemState,
    Trigger,
)
from domi_desktop.runtime.session import SessionRuns
from domi_desktop.store import Store
from tests.support.runtime import START, RuntimeHarness, harnesses
from tests.unit.runtime import test_resources_runtime as resources_runtime
from tests.unit.runtime.test_conditions_runtime import BATTERY, MAINS, cmd
from tests.unit.runtime.test_resources_runtime import BACKUP, env_job

HOUR = timedelta(hours=1)

make = resources_runtime.make
"""The harness whose source is told what to watch (the disks)."""


@pytest.fixture
def build(tmp_path: Path) -> Iterator[Callable[[SystemState], RuntimeHarness]]:
    """A harness whose machine is in the given state; each one stopped at the end."""
    store = Store.open(tmp_path / "data", now=START)
    try:
        with harnesses(store) as made:
            yield made
    finally:
        store.close()


@pytest.fixture
def harness(build: Callable[[SystemState], RuntimeHarness]) -> RuntimeHarness:
    return build(MAINS)


def count_job(path: Path, seconds: float = 0.0) -> Any:
    return cmd(
        f"import pathlib, time\np = pathlib.Path({str(path)!r})\n"
        "p.write_text(str(int(p.read_text()) + 1) if p.exists() else '1')\n"
        f"time.sleep({seconds})"
    )


def finished(h: RuntimeHarness, count: int) -> Callable[[], bool]:
    return lambda: len(h.kinds("run.finished")) >= count


def test_at_unlock_at_most_once_an_hour_recorded_with_its_trigger(
    harness: RuntimeHarness, tmp_path: Path
) -> None:
    h = harness
    count = tmp_path / "count"
    job = h.add(
        "0 0 1 1 *", count_job(count),
        session=SessionTriggers(at_unlock=True, min_interval=HOUR),
    )  # fmt: skip
    other = h.add("0 0 1 1 *", count_job(tmp_path / "other"), name="other",
                  session=SessionTriggers(at_login=True))  # fmt: skip
    h.start()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(finished(h, 1))
    h.loop.advance(timedelta(minutes=30))
    assert triggers.fire(Trigger.unlock) == 0, "unlocked again within the hour"
    h.loop.advance(timedelta(minutes=31))
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(finished(h, 2))
    runs = h.store.runs(schedule_id=job.id)
    assert [(r.trigger, r.status) for r in runs] == [(Trigger.unlock, RunStatus.succeeded)] * 2
    assert count.read_text() == "2"
    assert h.store.runs(schedule_id=other.id) == []

    # A new process reads when the trigger last fired from the record.
    again = SessionRuns(h.runtime)
    assert again.fire(Trigger.unlock) == 0


def test_a_trigger_follows_the_overlap_policy_and_a_refused_run_does_not_count(
    harness: RuntimeHarness, tmp_path: Path
) -> None:
    h = harness
    job = h.add(
        "0 0 1 1 *", count_job(tmp_path / "count", seconds=30),
        session=SessionTriggers(on_resume=True, min_interval=HOUR), overlap=Overlap.skip,
    )  # fmt: skip
    h.start()
    h.runtime.run_now(job.id)
    h.drain_until(lambda: bool(h.runtime.running_runs()))
    (manual,) = h.runtime.running_runs()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.resume) == 1
    h.drain_until(lambda: triggers.recording.get(Trigger.resume) == 0)
    assert len(h.store.runs(schedule_id=job.id)) == 1, "still running: no second copy"
    h.runtime.stop_run(manual, "stopped: test over")
    h.drain_until(finished(h, 1))
    assert triggers.fire(Trigger.resume) == 1, "the refused run did not use the hour up"
    h.drain_until(lambda: bool(triggers.running(Trigger.resume)))
    (resumed,) = triggers.running(Trigger.resume)
    assert h.store.get_run(resumed).trigger is Trigger.resume
    h.runtime.stop_run(resumed, "stopped: test over")
    h.drain_until(finished(h, 2))
    assert triggers.running(Trigger.resume) == []


def test_an_unlock_on_battery_waits_for_the_charger_then_runs_as_an_unlock(
    build: Callable[[SystemState], RuntimeHarness], tmp_path: Path
) -> None:
    h = build(BATTERY)
    count = tmp_path / "count"
    job = h.add(
        "0 0 1 1 *", count_job(count), conditions=Conditions(on_ac_power=True),
        session=SessionTriggers(at_unlock=True, min_interval=HOUR),
    )  # fmt: skip
    h.start()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(lambda: bool(h.kinds("run.waiting")))
    (run,) = h.store.runs(schedule_id=job.id)
    assert (run.trigger, run.status) == (Trigger.unlock, RunStatus.waiting)
    assert run.reason == "waiting for the charger"
    assert not count.exists(), "not run on battery"
    h.loop.advance(timedelta(minutes=20))
    assert triggers.fire(Trigger.unlock) == 0, "a waiting run counts: at most once an hour"
    h.source.change(MAINS)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    run = h.store.get_run(run.id)
    assert (run.trigger, run.status) == (Trigger.unlock, RunStatus.succeeded)
    assert run.reason == "started after waiting 20 minutes for the charger"
    assert count.read_text() == "1"


def test_an_unlock_past_its_wait_is_skipped_as_a_due_would_be(
    build: Callable[[SystemState], RuntimeHarness], tmp_path: Path
) -> None:
    h = build(BATTERY)
    job = h.add(
        "0 0 1 1 *", count_job(tmp_path / "count"),
        conditions=Conditions(
            on_ac_power=True, wait_at_most=timedelta(minutes=30), on_deadline=OnDeadline.skip
        ),
        session=SessionTriggers(at_unlock=True),
    )  # fmt: skip
    h.start()
    SessionRuns(h.runtime).fire(Trigger.unlock)
    h.drain_until(lambda: bool(h.kinds("run.waiting")))
    h.loop.advance(timedelta(minutes=31))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    (run,) = h.store.runs(schedule_id=job.id)
    assert (run.trigger, run.status) == (Trigger.unlock, RunStatus.skipped)
    assert run.reason is not None and "charger" in run.reason


def test_before_sleep_cannot_wait_it_is_skipped_and_the_skip_uses_no_interval(
    build: Callable[[SystemState], RuntimeHarness], tmp_path: Path
) -> None:
    h = build(BATTERY)
    count = tmp_path / "count"
    job = h.add(
        "0 0 1 1 *", count_job(count), conditions=Conditions(on_ac_power=True),
        session=SessionTriggers(before_sleep=True, min_interval=HOUR),
    )  # fmt: skip
    h.start()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.before_sleep) == 1
    h.drain_until(lambda: triggers.recording.get(Trigger.before_sleep) == 0)
    (run,) = h.store.runs(schedule_id=job.id)
    assert (run.trigger, run.status) == (Trigger.before_sleep, RunStatus.skipped)
    assert run.reason == "not run before sleep, which cannot wait: waiting for the charger"
    assert [e.skipped for e in h.kinds("schedule.fire")] == [SkipReason.conditions]
    assert triggers.running(Trigger.before_sleep) == []
    h.source.change(MAINS)
    h.loop.advance(timedelta(minutes=5))
    assert triggers.fire(Trigger.before_sleep) == 1, "the skip did not use the hour up"
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert count.read_text() == "1"
    assert SessionRuns(h.runtime).fire(Trigger.before_sleep) == 0, "read back: the run counts"


def test_an_unlock_waits_for_its_disk_and_the_job_is_told_where_it_is(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(MAINS)
    out = tmp_path / "where"
    job = h.add(
        "0 0 1 1 *", env_job(out), conditions=Conditions(volume="Backup"),
        session=SessionTriggers(at_unlock=True),
    )  # fmt: skip
    h.start()
    SessionRuns(h.runtime).fire(Trigger.unlock)
    h.drain_until(lambda: bool(h.kinds("run.waiting")))
    (run,) = h.store.runs(schedule_id=job.id)
    assert (run.status, run.reason) == (RunStatus.waiting, "waiting for the disk Backup")
    h.source.change(replace(MAINS, volumes=(BACKUP,)))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    ended = h.store.get_run(run.id)
    # Its status and output first: under Wine on a loaded machine the file was once missing.
    assert ended.status is RunStatus.succeeded, (ended.status, ended.reason, ended.output_tail)
    assert out.read_text() == "/media/me/Backup"
    assert ended.trigger is Trigger.unlock


def test_an_unlock_while_a_due_waits_adds_no_second_run(
    build: Callable[[SystemState], RuntimeHarness], tmp_path: Path
) -> None:
    h = build(BATTERY)
    count = tmp_path / "count"
    job = h.add(
        "0 11 * * *", count_job(count), conditions=Conditions(on_ac_power=True),
        session=SessionTriggers(at_unlock=True, min_interval=HOUR),
    )  # fmt: skip
    h.start()
    h.loop.advance(timedelta(hours=1, minutes=5))
    (due,) = h.store.runs(schedule_id=job.id)
    assert due.status is RunStatus.waiting
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(lambda: triggers.recording.get(Trigger.unlock) == 0)
    assert h.store.runs(schedule_id=job.id) == [due], "the waiting due stays the one run"
    h.source.change(MAINS)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert [(r.trigger, r.status) for r in h.store.runs(schedule_id=job.id)] == [
        (Trigger.scheduled, RunStatus.succeeded)
    ]
    assert count.read_text() == "1"
    h.loop.advance(timedelta(minutes=5))
    assert triggers.fire(Trigger.unlock) == 1, "the unlock that added nothing used no interval"
