"""What is left of a job whose app died: found by the job's identity, stopped before a re-run.

After a ``kill -9`` of the app, a crash or a power cut, the job goes on in its own process group
(session): nothing stops it, and a re-run started beside it would be a second copy. So a start-up
looks for the job's process (its pid AND its start marker, so a pid handed to another process is
left alone) and, on POSIX, for every process of the session the job led: its children were
reparented when it died, but they keep its session id, and the kernel hands out no pid that is
still a live session's id, so that id cannot belong to anyone else.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass

import psutil

from domi_desktop.actions.identity import Job, find, marker_of, same_start

KILL_WAIT = 2.0
"""Seconds to wait for the leftovers to go after the forceful kill."""

_POLL = 0.05


@dataclass(frozen=True, slots=True)
class Stopped:
    """What ``stop_leftovers`` found and did."""

    found: int
    """Processes of the job that were alive."""
    survivors: int
    """Of those, how many were still alive after the forceful kill."""

    def describe(self) -> str | None:
        """For the run's reason; None when nothing was left."""
        if not self.found:
            return None
        if self.survivors:
            return (
                f"its leftover process tree ({_processes(self.found)}) could not be stopped: "
                f"{_processes(self.survivors)} still alive; not re-run"
            )
        return f"stopped its leftover process tree ({_processes(self.found)})"


def stop_leftovers(job: Job, *, grace: float, kill_wait: float = KILL_WAIT) -> Stopped:
    """Stop what is left of ``job``: ask (SIGTERM), wait ``grace`` seconds, then kill."""
    return _stop(leftovers(job), grace, kill_wait)


def stop_processes(
    found: list[psutil.Process], *, grace: float, kill_wait: float = KILL_WAIT
) -> Stopped:
    """Stop ``found`` and what they started: ask (SIGTERM), wait ``grace`` seconds, then kill."""
    return _stop(_with_descendants(found), grace, kill_wait)


def _stop(tree: list[psutil.Process], grace: float, kill_wait: float) -> Stopped:
    if not tree:
        return Stopped(0, 0)
    for process in tree:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            process.terminate()
    alive = _wait_gone(tree, grace)
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            process.kill()
    return Stopped(len(tree), len(_wait_gone(alive, kill_wait)))


def leftovers(job: Job) -> list[psutil.Process]:
    """The live processes of ``job``: itself if it is still the same process, its descendants,
    and (POSIX) the members of the session it led."""
    found: dict[int, psutil.Process] = {}
    root = find(job.pid)
    if root is not None:
        if job.started is None or not same_start(job.started, marker_of(root)):
            # Another process got the pid after the job ended, and any session with that id
            # is that process's: nothing here is the job's.
            return []
        found[root.pid] = root
    if sys.platform != "win32":
        for process in psutil.process_iter():
            with contextlib.suppress(OSError):
                if os.getsid(process.pid) == job.pid:
                    found.setdefault(process.pid, process)
    return _with_descendants(list(found.values()))


def _with_descendants(processes: list[psutil.Process]) -> list[psutil.Process]:
    found = {process.pid: process for process in processes}
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            for child in process.children(recursive=True):
                found.setdefault(child.pid, child)
    # A data dir copied from elsewhere could name our own session: never stop ourselves.
    me = os.getpid()
    return [
        process for pid, process in sorted(found.items()) if pid != me and find(pid) is not None
    ]


def _wait_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait up to ``timeout`` seconds for ``processes`` to end; returns those still alive.

    Not ``psutil.wait_procs``: a reparented leftover is not our child, and where PID 1 does not
    reap (a container), it stays a zombie that ``wait_procs`` takes for alive.
    """
    deadline = time.monotonic() + timeout
    while True:
        alive = [process for process in processes if _alive(process)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(_POLL)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def _processes(count: int) -> str:
    return f"{count} process" if count == 1 else f"{count} processes"
