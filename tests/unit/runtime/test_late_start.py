"""A machine that froze between claiming a run and starting its job never starts it once another
machine may have taken the run over: on a shared store two live copies must never be.

The desk's runtime shares a PostgreSQL store on a fake clock. It claims a due and hands the job to
its runner, whose supervisor stands still (a SIGSTOP, a debugger) past the run's lease. Another
machine (a process of its own, as one store is open per process) may take the run over meanwhile.
When the desk thaws, its runner finds the start too late and the engine writes the start anew: the
store refuses it if the run is no longer the desk's, and the job starts if it still is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.actions import warden
from domi_desktop.actions.supervisor import supervisor
from domi_desktop.model import CommandAction, Policies, Run, RunStatus, WakeReason
from domi_desktop.runtime.engine import Runtime
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.store.leases import EXPIRED
from tests.support import pg
from tests.support.fakes import FakeClock, FakeLoop

START = datetime(2024, 6, 5, 10, 0, 30, tzinfo=UTC)

TAKE_OVER = """
import sys
from datetime import datetime
from pathlib import Path
from domi_desktop.store import Store
now = datetime.fromisoformat(sys.argv[3])
store = Store.open(Path(sys.argv[1]), now=now, url=sys.argv[2], machine="nas")
print(*[run.id for run in store.take_over_expired(now)])
store.close()
"""


class Desk:
    """The desk's runtime on the shared store, with a job that leaves a file when it runs."""

    def __init__(self, url: str, where: Path) -> None:
        self.url, self.where = url, where
        self.store = Store.open(where / "desk", now=START, url=url, machine="desk")
        self.clock = FakeClock(START)
        self.loop = FakeLoop(self.clock)
        self.runtime = Runtime(self.store, self.clock, self.loop, MemorySecretStore({}))
        self.ran = where / "ran"
        touch = "import sys; open(sys.argv[1], 'w')"
        action = CommandAction(argv=(sys.executable, "-c", touch, str(self.ran)))
        self.job = self.store.create_schedule(
            "report", "1 10 * * *", "UTC", action, Policies(), now=START
        )
        self.runtime.start()

    def claim_frozen(self, then: Callable[[], None]) -> Run:
        """The due claimed and handed to a frozen supervisor; a lease goes by, ``then`` runs,
        the supervisor thaws; returns the run once the desk has let it go."""
        frozen, thawed = threading.Event(), threading.Event()

        def freeze() -> None:
            frozen.set()
            thawed.wait(60)

        supervisor().call_soon(freeze)
        try:
            assert frozen.wait(10)
            self.clock.advance(timedelta(seconds=31))
            woke = self.runtime.driver.wake(WakeReason.timer)
            assert [fire.schedule_id for fire in woke.fires] == [self.job.id]
            self.clock.advance(self.store.holder.lease + timedelta(seconds=1))
            then()
        finally:
            thawed.set()
        self.loop.drain(lambda: not self.runtime.running_runs(), timeout=60)
        (run,) = self.store.runs(schedule_id=self.job.id)
        return run

    def take_over(self) -> list[str]:
        """The nas takes over what the desk's lapsed leases let it; the ids it took."""
        taken = subprocess.run(
            [sys.executable, "-c", TAKE_OVER, str(self.where / "nas"), self.url,
             self.clock.now().isoformat()],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return taken.stdout.split()

    def close(self) -> None:
        self.runtime.stop(wait=10)
        self.store.close()
        warden.install(None)


@pytest.fixture
def desk(postgresql_dsn: str, tmp_path: Path) -> Iterator[Desk]:
    with pg.fresh_database(postgresql_dsn, f"late_start_{os.getpid()}") as url:
        made = Desk(url, tmp_path)
        try:
            yield made
        finally:
            made.close()


def test_a_job_handed_over_before_a_freeze_is_not_started_once_taken_over(desk: Desk) -> None:
    taken: list[str] = []
    run = desk.claim_frozen(lambda: taken.extend(desk.take_over()))
    assert taken == [str(run.id)]
    assert (run.status, run.reason) == (RunStatus.interrupted, f"{EXPIRED}desk")
    assert not desk.ran.exists(), "the desk started the job after the nas took the run over"


def test_a_job_frozen_past_its_lease_that_nobody_took_over_starts_on_a_fresh_lease(
    desk: Desk,
) -> None:
    run = desk.claim_frozen(lambda: None)
    assert (run.status, run.reason) == (RunStatus.succeeded, None)
    assert run.started_at is not None and run.started_at > START + desk.store.holder.lease
    assert desk.ran.exists()
