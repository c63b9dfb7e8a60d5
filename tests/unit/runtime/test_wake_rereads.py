"""A wake re-reads every schedule only when another process changed one. The app's own
claims and results, written by the store's worker on a connection of its own, used to look like
such a change (SQLite's ``data_version`` moves on any other connection's commit), so the wake
after every busy one re-read them all on the loop thread; the database's change counter
(schema version 5) leaves them out, and a CLI edit is still seen at the next wake."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication

from domi_desktop.app.qtloop import QtLoop
from domi_desktop.events import FireEvent
from domi_desktop.frontdoor.service import Service
from domi_desktop.model import CommandAction, Policies, RunStatus, WakeReason
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock

SCHEDULES = 5
QUICK_JOB = (sys.executable, "-c", "pass")  # `true` is POSIX's
MINUTE = timedelta(minutes=1)
REREAD = "changed by another process: re-reading them"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per ``Store.read_schedules`` call: a full re-read of the schedules."""
    calls: list[int] = []
    original = Store.read_schedules

    def counted(store: Store) -> tuple[list[object], dict[int, str]]:
        calls.append(1)
        return original(store)  # type: ignore[return-value]

    monkeypatch.setattr(Store, "read_schedules", counted)
    return calls


def where_the_runs_stand(store: Store, runtime: Runtime) -> str:
    """Each run's row, and the job's pid of each the runtime still carries (None: not started)."""
    rows = [(run.id, run.status.value, run.reason) for run in store.runs()]
    pids = {}
    for run_id in runtime.running_runs():
        active = runtime.lanes.active(run_id)
        pids[run_id] = None if active is None or active.handle is None else active.handle.pid
    return f"rows {rows}, carried {pids}"


def until(
    app: QCoreApplication,
    condition: Callable[[], bool],
    what: str,
    state: Callable[[], object] = lambda: "",
) -> None:
    """``state``: what the failure's message shows of where things stood."""
    # Generous: a worker process starts in seconds under Wine, and on a loaded machine.
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {state()}"
        app.processEvents()
        time.sleep(0.002)


def cli_disable(data: Path, runtime_dir: Path, schedule_id: int) -> None:
    """The CLI writing the database itself, as it does when no app answers on the socket."""
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(runtime_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", "schedule", "disable", str(schedule_id)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_wake_after_the_workers_claims_and_results_does_not_re_read_but_sees_a_cli_edit(
    core_app: QCoreApplication,
    tmp_path: Path,
    reads: list[int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="domi_desktop")
    runtime_dir = tmp_path / "runtime"
    runtime_dir.mkdir(mode=0o700)
    data = tmp_path / "data"
    # Near the real time: the CLI's open prunes runs by age against the real clock.
    start = datetime.now(UTC).replace(second=30, microsecond=0)
    clock = FakeClock(start)
    with Store.open(data, now=start) as store:
        ids = [
            store.create_schedule(
                f"job {i}", "* * * * *", "UTC", CommandAction(argv=QUICK_JOB), Policies(),
                now=start,
            ).id
            for i in range(SCHEDULES)
        ]  # fmt: skip
        loop = QtLoop()
        wakes: list[WakePlan] = []
        fired: list[FireEvent] = []
        runtime = Runtime(
            store, clock, loop, MemorySecretStore(), recorder=Recorder(store, loop),
            on_wake=lambda plan, _reason: wakes.append(plan),
        )  # fmt: skip
        runtime.subscribe(lambda e: fired.append(e) if isinstance(e, FireEvent) else None)

        def wake_and_settle(runs: int) -> WakePlan:
            """A timer wake a minute on; returns its final plan once every run it fired has
            finished and the worker has written the results."""
            clock.advance(MINUTE)
            woke = len(wakes)
            loop.call_soon(lambda: runtime.driver.wake(WakeReason.timer))
            until(core_app, lambda: len(wakes) > woke, "the wake")
            until(
                core_app,
                lambda: store.count_runs(status=RunStatus.succeeded) == runs,
                f"{runs} runs written by the worker",
                lambda: where_the_runs_stand(store, runtime),
            )
            return wakes[-1]

        try:
            loop.call_soon(runtime.start)
            until(core_app, lambda: bool(wakes), "the first wake")
            assert len(reads) == 1  # the start reads them all once

            wake_and_settle(SCHEDULES)
            assert len(fired) == SCHEDULES
            caplog.clear()
            plan = wake_and_settle(2 * SCHEDULES)
            assert len(fired) == 2 * SCHEDULES and not plan.errors
            assert len(reads) == 1, "a wake re-read the schedules after the app's own writes"
            # An edit made here (the GUI, the socket) re-plans its one schedule at once.
            service = Service(store, clock, on_change=runtime.driver.reload)
            service.update_schedule({"id": ids[1], "name": "renamed here"})
            assert len(reads) == 1, "an edit made here re-read every schedule"
            assert REREAD not in caplog.text

            cli_disable(data, runtime_dir, ids[0])
            plan = wake_and_settle(3 * SCHEDULES - 1)
            assert len(reads) == 2 and REREAD in caplog.text
            assert runtime.driver.next_fire(ids[0]) is None
            assert runtime.driver.next_fire(ids[1]) == plan.now.replace(second=0) + MINUTE
        finally:
            runtime.stop()
            runtime.recorder.close()
