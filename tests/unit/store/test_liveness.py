from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.errors import StoreError
from domi_desktop.model import PROCESS_DIED, RunStatus, Schedule, Trigger
from domi_desktop.store import Store

Spawn = Callable[..., subprocess.Popen[str]]
Sql = Callable[..., list[tuple[object, ...]]]
LATER = timedelta(minutes=5)
linux_only = pytest.mark.linux_only  # reads /proc


def _hold(spawn: Spawn, data_dir: Path, schedule: Schedule) -> tuple[subprocess.Popen[str], int]:
    """A worker process that records a running run and keeps it until told to exit."""
    worker = spawn("hold", data_dir, schedule.id)
    assert worker.stdout is not None
    return worker, int(worker.stdout.readline())


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    code = "import os; print(os.getpid())"
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return int(finished.stdout)


def test_a_run_whose_process_died_is_interrupted_and_offered_for_one_resume(
    store: Store, schedule: Schedule, data_dir: Path, now: datetime, spawn: Spawn
) -> None:
    worker, run_id = _hold(spawn, data_dir, schedule)
    worker.communicate("exit\n", timeout=30)

    [orphan] = store.interrupt_orphans(now + LATER)

    assert orphan == store.get_run(run_id)
    assert (orphan.status, orphan.reason, orphan.finished_at) == (
        RunStatus.interrupted,
        PROCESS_DIED,
        now + LATER,
    )
    resumed = store.record_manual_run(schedule.id, now + LATER, Trigger.resumed, run_id)
    assert store.get_run(resumed).resumed_from == run_id
    assert store.interrupt_orphans(now + 2 * LATER) == []
    with pytest.raises(StoreError, match=f"run {run_id} was already resumed as run {resumed}"):
        store.record_manual_run(schedule.id, now, Trigger.resumed, run_id)


def test_a_run_of_a_live_process_is_left_alone_until_it_dies(
    store: Store, schedule: Schedule, data_dir: Path, now: datetime, spawn: Spawn
) -> None:
    worker, run_id = _hold(spawn, data_dir, schedule)

    assert store.interrupt_orphans(now) == []
    assert store.get_run(run_id).status is RunStatus.running

    worker.communicate("exit\n", timeout=30)
    assert [run.id for run in store.interrupt_orphans(now)] == [run_id]


@linux_only
def test_a_killed_but_unreaped_process_counts_as_dead(
    store: Store, schedule: Schedule, data_dir: Path, now: datetime, spawn: Spawn
) -> None:
    worker, run_id = _hold(spawn, data_dir, schedule)
    os.kill(worker.pid, signal.SIGKILL)
    # Wait for the kill to land without reaping, so the worker stays a zombie.
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)

    assert [run.id for run in store.interrupt_orphans(now)] == [run_id]


def test_this_process_keeps_its_own_running_runs(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    run_id = store.record_manual_run(schedule.id, now)
    assert store.interrupt_orphans(now) == []
    assert [run.id for run in store.running_runs()] == [run_id]


def test_an_earlier_process_with_our_pid_is_dead(
    store: Store, schedule: Schedule, now: datetime, sql: Sql
) -> None:
    # After a reboot or in a container, a new process often gets the pid of the one that crashed.
    run_id = store.record_manual_run(schedule.id, now)
    sql("UPDATE runs SET owner_token = 'from-before-the-crash' WHERE id = ?", run_id)
    assert [run.id for run in store.interrupt_orphans(now)] == [run_id]


@linux_only
def test_a_live_pid_that_started_at_another_time_is_another_process(
    store: Store, schedule: Schedule, now: datetime, sql: Sql, spawn: Spawn, data_dir: Path
) -> None:
    worker, run_id = _hold(spawn, data_dir, schedule)
    other = store.record_manual_run(schedule.id, now)
    sql(
        "UPDATE runs SET owner_pid = ?, owner_token = 'x', owner_started = 'boot:1' WHERE id = ?",
        worker.pid,
        other,
    )
    assert [run.id for run in store.interrupt_orphans(now)] == [other]
    assert store.get_run(run_id).status is RunStatus.running


def test_a_resume_that_dies_too_is_not_offered_again(
    store: Store, schedule: Schedule, now: datetime, sql: Sql
) -> None:
    first = store.record_manual_run(schedule.id, now)
    sql("UPDATE runs SET owner_pid = ? WHERE id = ?", _dead_pid(), first)
    [orphan] = store.interrupt_orphans(now)
    again = store.record_manual_run(schedule.id, now, Trigger.resumed, resumed_from=orphan.id)
    sql("UPDATE runs SET owner_pid = ? WHERE id = ?", _dead_pid(), again)

    assert store.interrupt_orphans(now + LATER) == []
    assert store.get_run(again).status is RunStatus.interrupted


def test_a_dead_owners_recorded_job_is_offered_for_stopping_and_its_note_joins_the_reason(
    store: Store, schedule: Schedule, data_dir: Path, now: datetime, spawn: Spawn, sql: Sql
) -> None:
    from domi_desktop.actions.identity import Job

    worker, live_run = _hold(spawn, data_dir, schedule)
    store.record_job(live_run, 4242, "boot:7")
    dead_run = store.record_manual_run(schedule.id, now)
    store.start_run(dead_run, now)
    assert store.record_job(dead_run, 4343, "boot:8")
    sql("UPDATE runs SET owner_pid = ? WHERE id = ?", _dead_pid(), dead_run)

    # The live worker's job is its own business; the dead owner's is offered.
    assert store.orphaned_jobs() == {dead_run: Job(4343, "boot:8")}
    [orphan] = store.interrupt_orphans(now, {dead_run: "stopped its leftover process tree"})
    assert orphan.reason == f"{PROCESS_DIED}; stopped its leftover process tree"
    assert not store.record_job(dead_run, 1, None)  # no longer running
    worker.communicate("exit\n", timeout=30)


def test_a_retry_forgets_the_previous_attempts_job(
    store: Store, schedule: Schedule, now: datetime, sql: Sql
) -> None:
    run_id = store.record_manual_run(schedule.id, now)
    store.record_job(run_id, 4242, "boot:7")
    store.start_run(run_id, now, attempt=1)
    assert sql("SELECT job_pid, job_started FROM runs WHERE id = ?", run_id) == [(None, None)]


def test_start_markers_compare_only_when_both_are_known_and_in_one_format() -> None:
    from domi_desktop.actions.identity import same_start

    assert same_start("boot:7", "boot:7")
    assert not same_start("boot:7", "boot:8")
    assert not same_start("t:1700000000.000001", "t:1700000000.000002")  # macOS, Windows
    assert same_start(None, "boot:7") and same_start("boot:7", None)
    # A bare FILETIME of a Windows release before psutil: the pid alone decides.
    assert same_start("133497600000000000", "t:1700000000.000001")


def test_this_process_has_a_start_marker_of_its_own() -> None:
    from domi_desktop.actions import identity as liveness

    me = liveness.this_process()
    assert me.started is not None and me.started == liveness.start_marker(os.getpid())
    assert liveness.start_marker(_dead_pid()) is None
    assert liveness.is_running(os.getpid(), me.started)
    assert not liveness.is_running(os.getpid(), me.started + "0")
