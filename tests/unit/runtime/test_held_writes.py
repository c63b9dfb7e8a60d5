"""A wake whose writes are held up (another program holds the database's write lock across a
minute boundary): the next wake comes as soon as they go through, so the due that passed
meanwhile runs instead of being recorded missed, and the held due's run, started long after its
due, is marked late. The production recorder (its own thread) is used, as the app runs it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import CommandAction, Overlap, Policies, RunStatus, WakeReason
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop
from tests.support.locks import write_lock

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


def test_the_due_after_a_held_wake_runs_and_the_held_one_is_late(
    store: Store, tmp_path: Path
) -> None:
    loop = FakeLoop(FakeClock(START))
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=(sys.executable, "-c", "pass")),
        Policies(overlap=Overlap.parallel), now=START,
    )  # fmt: skip
    runtime = Runtime(store, loop.clock, loop, MemorySecretStore(), recorder=Recorder(store, loop))
    try:
        runtime.start()
        with write_lock(store.path):
            loop.advance(timedelta(minutes=1))  # 10:01 decided; its claim waits on the lock
            loop.advance(timedelta(seconds=75))  # 10:02:15: the lock is still held

        def dues() -> dict[datetime | None, tuple[RunStatus, bool]]:
            return {run.due: (run.status, run.late) for run in store.runs(schedule.id)}

        # Its claim written and the wake over: the driver has armed its next wake.
        loop.drain(lambda: START + timedelta(minutes=1) in dues() and not runtime.driver.waking)
        loop.advance(timedelta(seconds=1))  # the writes went through: the next wake is now
        loop.drain(lambda: START + timedelta(minutes=2) in dues())

        runs = dues()
        held_status, held_late = runs[START + timedelta(minutes=1)]
        assert held_status is not RunStatus.skipped and held_late
        after_status, after_late = runs[START + timedelta(minutes=2)]
        assert after_status is not RunStatus.skipped and not after_late
    finally:
        runtime.stop(wait=5)


@pytest.mark.parametrize(
    "back",
    [timedelta(seconds=s) for s in (20, 30, 90, 180, 7200, 86400)],
    ids=lambda back: f"{back.total_seconds():.0f}s",
)
@pytest.mark.parametrize("told", [False, True], ids=["found", "told"])
def test_a_clock_set_back_decides_every_due_once(store: Store, back: timedelta, told: bool) -> None:
    """``told``: the OS says the clock was set (the app's clock watch), at once; else the next
    timer finds the jump."""
    loop = FakeLoop(FakeClock(START))
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=(sys.executable, "-c", "pass")),
        Policies(overlap=Overlap.parallel), now=START,
    )  # fmt: skip
    runtime = Runtime(store, loop.clock, loop, MemorySecretStore(), recorder=Recorder(store, loop))

    def dues() -> list[datetime | None]:
        return sorted(run.due for run in store.runs(schedule.id) if run.due is not None)

    def minute() -> datetime:
        return loop.clock.now().replace(second=0)

    try:
        runtime.start()
        for _ in range(5):
            loop.advance(timedelta(minutes=1))
            loop.drain(lambda: minute() in dues() and not runtime.driver.waking)
        loop.advance(timedelta(seconds=30))
        jumped_at = loop.clock.now()
        loop.clock.set_wall(jumped_at - back)
        if told:
            runtime.driver.wake(WakeReason.clock_jump)
        for _ in range(12):
            loop.advance(timedelta(minutes=1))
            loop.drain(lambda: minute() in dues() and not runtime.driver.waking)
        # Every due the clock showed, before the jump and after it: one row each.
        shown = [START + timedelta(minutes=m) for m in range(1, 6)]
        after = jumped_at - back
        shown += [after.replace(second=0) + timedelta(minutes=m) for m in range(1, 13)]
        expected = sorted(set(shown))
        assert dues() == expected
    finally:
        runtime.stop(wait=5)
