"""One-offs, skip and snooze through the runtime with a real SQLite store, real processes and a
fake clock: what the history records."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.model import CommandAction, Policies, RunStatus, SkipReason, Trigger, WakeReason
from domi_desktop.runtime.engine import Runtime
from domi_desktop.scheduler.oneoff import once_at_from, skip_next, snooze_next
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop

START = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)
TRUE = CommandAction(argv=(sys.executable, "-c", "pass"))


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[tuple[Store, FakeClock, FakeLoop, Runtime, list[str]]]:
    store = Store.open(tmp_path / "data", now=START)
    clock = FakeClock(START)
    loop = FakeLoop(clock)
    runtime = Runtime(store, clock, loop, MemorySecretStore({}))
    kinds: list[str] = []
    runtime.subscribe(lambda event: kinds.append(event.kind))
    yield store, clock, loop, runtime, kinds
    runtime.stop(wait=5)
    store.close()


def finished(loop: FakeLoop, kinds: list[str], count: int) -> None:
    loop.drain(lambda: kinds.count("run.finished") >= count)


def test_a_one_off_missed_while_asleep_runs_once_late_and_is_then_done(harness: Any) -> None:
    store, clock, loop, runtime, kinds = harness
    at, expr = once_at_from(datetime(2026, 12, 7, 9, 0), "UTC", START)
    made = store.create_schedule("once", expr, "UTC", TRUE, Policies(once_at=at), now=START)
    runtime.start()
    clock.sleep_machine(timedelta(days=2))  # asleep through it and through the next year's "09:00"
    runtime.driver.wake(WakeReason.resume)
    finished(loop, kinds, 1)
    clock.sleep_machine(timedelta(days=400))
    runtime.driver.wake(WakeReason.resume)
    (run,) = store.runs(schedule_id=made.id)
    assert run.status is RunStatus.succeeded and run.due == at
    assert run.late and run.trigger is Trigger.catch_up and run.missed_count == 0
    assert store.get_schedule(made.id).last_due == at
    assert runtime.driver.next_fire(made.id) is None


def test_a_skipped_due_is_recorded_you_skipped_and_a_snoozed_one_runs_late_against_its_due(
    harness: Any,
) -> None:
    store, clock, loop, runtime, kinds = harness
    made = store.create_schedule("daily", "0 9 * * *", "UTC", TRUE, now=START)
    store.update_schedule(
        made.id, now=START, policies=replace(made.policies, hold=skip_next(made, START))
    )
    runtime.start()
    loop.advance(timedelta(hours=4))  # 10:00: the 09:00 was skipped
    (skipped,) = store.runs(schedule_id=made.id)
    assert skipped.status is RunStatus.skipped and skipped.reason == SkipReason.you_skipped.value
    assert skipped.due == datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
    current = store.get_schedule(made.id)
    hold = snooze_next(current, clock.now(), timedelta(hours=1))
    store.update_schedule(made.id, now=clock.now(), policies=replace(current.policies, hold=hold))
    runtime.schedule_changed(made.id)
    loop.advance(timedelta(hours=23, minutes=30))  # 09:30 next day: still snoozed
    assert len(store.runs(schedule_id=made.id)) == 1
    loop.advance(timedelta(minutes=31))
    finished(loop, kinds, 1)
    runs = store.runs(schedule_id=made.id)
    assert [r.status for r in runs] == [RunStatus.succeeded, RunStatus.skipped]
    assert runs[0].due == datetime(2026, 12, 8, 9, 0, tzinfo=UTC) and runs[0].late
    assert (
        runs[0].fired_at is not None and hold.until is not None and runs[0].fired_at >= hold.until
    )
