"""Leftovers of a job whose app died, with real processes: found by identity, stopped as a tree."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.actions import identity
from domi_desktop.actions.identity import Job
from domi_desktop.actions.leftovers import Stopped, leftovers, stop_leftovers
from tests.unit.actions.conftest import is_gone

pytestmark = pytest.mark.posix_only  # POSIX sessions and signals


@pytest.fixture
def orphaned(tmp_path: Path) -> Iterator[tuple[Job, list[int]]]:
    """A job (its own session) whose shell has exited, leaving two grandchildren behind: what a
    job looks like after the app died and the parent-death signal took the job's own process."""
    pids = tmp_path / "pids"
    script = (
        f"sleep 300 & echo $! >> {pids}; (trap '' TERM; exec sleep 300) & echo $! >> {pids}; wait"
    )
    shell = subprocess.Popen(["/bin/sh", "-c", script], start_new_session=True)
    while not pids.exists() or len(pids.read_text().split()) < 2:
        time.sleep(0.01)
    job = Job(shell.pid, identity.start_marker(shell.pid))
    grandchildren = [int(pid) for pid in pids.read_text().split()]
    yield job, [shell.pid, *grandchildren]
    os.killpg(shell.pid, signal.SIGKILL) if not is_gone(shell.pid) else None
    for pid in grandchildren:
        if not is_gone(pid):
            os.kill(pid, signal.SIGKILL)
    shell.wait()


def test_it_stops_the_job_and_every_descendant_asking_first_then_killing(
    orphaned: tuple[Job, list[int]],
) -> None:
    job, pids = orphaned
    assert sorted(process.pid for process in leftovers(job)) >= sorted(pids)

    stopped = stop_leftovers(job, grace=0.5)

    assert stopped == Stopped(found=len(pids), survivors=0)
    assert all(is_gone(pid) for pid in pids)
    assert stopped.describe() == "stopped its leftover process tree (3 processes)"


def test_it_finds_the_session_of_a_job_whose_own_process_is_gone(
    orphaned: tuple[Job, list[int]],
) -> None:
    job, (shell, *grandchildren) = orphaned
    os.kill(shell, signal.SIGKILL)  # reparented now: no parent link leads to them any more
    while not is_gone(shell):
        time.sleep(0.01)

    stopped = stop_leftovers(job, grace=0.5)

    assert stopped.found == len(grandchildren)
    assert all(is_gone(pid) for pid in grandchildren)


def test_a_process_that_reused_the_pid_is_not_the_job_and_neither_is_its_session(
    orphaned: tuple[Job, list[int]],
) -> None:
    job, pids = orphaned
    boot, _, ticks = (job.started or "").rpartition(":")
    reused = Job(job.pid, f"{boot}:{int(ticks) - 100}")

    assert leftovers(reused) == []
    assert stop_leftovers(reused, grace=0.1) == Stopped(0, 0)
    assert not any(is_gone(pid) for pid in pids)
    assert Stopped(0, 0).describe() is None


def test_a_job_that_is_gone_with_all_its_session_leaves_nothing_to_stop() -> None:
    done = subprocess.run(["/bin/sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    assert stop_leftovers(Job(int(done.stdout), None), grace=0.1) == Stopped(0, 0)


def test_a_leftover_that_ignores_even_sigkill_is_reported_not_hidden() -> None:
    assert Stopped(found=3, survivors=1).describe() == (
        "its leftover process tree (3 processes) could not be stopped: 1 process still alive;"
        " not re-run"
    )
