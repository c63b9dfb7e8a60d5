"""Run now while a wake's fire is being recorded: the lane is busy from the moment the fire is
decided, not from its record, so a second copy never starts beside the first. Another program
holding the database's write lock across the minute boundary widens the gap to seconds; the
production recorder (a thread of its own) is used, as the app runs it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.errors import BusyError
from domi_desktop.model import CommandAction, Overlap, Policies, RunStatus, Trigger
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop
from tests.support.locks import write_lock

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)
LONG_JOB = (sys.executable, "-c", "import time; time.sleep(60)")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


@pytest.fixture
def loop() -> FakeLoop:
    return FakeLoop(FakeClock(START))


@pytest.fixture
def runtime(store: Store, loop: FakeLoop) -> Iterator[Runtime]:
    started = Runtime(store, loop.clock, loop, MemorySecretStore(), recorder=Recorder(store, loop))
    yield started
    started.stop(wait=5)


@pytest.mark.parametrize("overlap", [Overlap.skip, Overlap.queue])
def test_run_now_while_the_wakes_claim_is_held_up_starts_nothing(
    store: Store, loop: FakeLoop, runtime: Runtime, overlap: Overlap
) -> None:
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=LONG_JOB), Policies(overlap=overlap),
        now=START,
    )  # fmt: skip
    runtime.start()
    answers: list[int | Exception] = []
    with write_lock(store.path):
        loop.advance(timedelta(minutes=1))  # the 10:01 due: decided, its claim waits on the lock
        runtime.run_now(schedule.id, answers.append)
    loop.drain(lambda: bool(answers) and bool(runtime.running_runs()))

    (answer,) = answers
    assert isinstance(answer, BusyError), answer
    runs = store.runs(schedule_id=schedule.id)
    assert [(run.trigger, run.status) for run in runs] == [(Trigger.scheduled, RunStatus.running)]
    assert len(runtime.running_runs()) == 1


def test_a_wake_while_a_run_now_is_being_recorded_skips_its_due(
    store: Store, loop: FakeLoop, runtime: Runtime
) -> None:
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=LONG_JOB), Policies(), now=START
    )
    runtime.start()
    answers: list[int | Exception] = []
    with write_lock(store.path):
        runtime.run_now(schedule.id, answers.append)
        loop.advance(timedelta(minutes=1))
    loop.drain(lambda: bool(answers) and len(store.runs(schedule_id=schedule.id)) == 2)

    (manual,) = answers
    assert isinstance(manual, int), manual
    by_trigger = {run.trigger: run for run in store.runs(schedule_id=schedule.id)}
    assert by_trigger[Trigger.manual].status is RunStatus.running
    assert by_trigger[Trigger.scheduled].status is RunStatus.skipped
    assert by_trigger[Trigger.scheduled].reason == "busy"
    assert runtime.running_runs() == [manual]
