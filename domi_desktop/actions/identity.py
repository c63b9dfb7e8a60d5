"""Who owns a running run, and whether that process is still alive; the same for a run's job.

A run left ``running`` by a process that died must become ``interrupted``; a run of another live
process (a second instance, a CLI) must be left alone. A pid alone is not an identity: after a
reboot or in a container the same pid comes back for another process. So an owner is the pid, a
random token drawn once per process (to tell this process from an earlier one with the same pid),
and the process start marker (to spot a pid reused by another one). A job is its pid and start
marker.

psutil reads the start time on every OS (Linux /proc, macOS sysctl, Windows process times), and
tells a zombie from a live process; it replaced the hand-written /proc parsing and Windows ctypes
that knew no start time on macOS, where a pid reused after a reboot kept a dead run ``running``.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True, slots=True)
class Owner:
    pid: int
    token: str
    started: str | None
    """An OS-specific marker of this incarnation of ``pid`` (start time), or None where unknown."""


@dataclass(frozen=True, slots=True)
class Job:
    """The process a run's job started as."""

    pid: int
    started: str | None
    """Its start marker; None if it had exited before the marker was read."""


_this: Owner | None = None
_this_lock = threading.Lock()


def this_process() -> Owner:
    global _this
    pid = os.getpid()
    # Two threads must not draw two tokens: runs stamped with the loser's would look orphaned.
    with _this_lock:
        # A forked child inherits the module state but is another process: it gets its own.
        if _this is None or _this.pid != pid:
            _this = Owner(pid=pid, token=secrets.token_hex(8), started=start_marker(pid))
        return _this


RUN_ID_VARIABLE, OWNER_VARIABLE = "DOMI_RUN_ID", "DOMI_OWNER"
"""What every job's environment carries: its run's id (for the job itself to use) and the token
of the process that started it. Children inherit them, so a job whose pid never reached the
database (a write lock held for long, then a crash) is still found by ``tagged_jobs``."""


def job_tags(run_id: int) -> dict[str, str]:
    return {RUN_ID_VARIABLE: str(run_id), OWNER_VARIABLE: this_process().token}


def tagged_jobs(owners: Mapping[int, str]) -> dict[int, list[psutil.Process]]:
    """Run id → the live processes whose environment names that run and its owner's token
    (``owners``: run id → token); only processes this user may read are seen."""
    found: dict[int, list[psutil.Process]] = {}
    if not owners:
        return found
    me = os.getpid()
    for process in psutil.process_iter():
        if process.pid == me:
            continue
        try:
            env = process.environ()
        except (psutil.Error, OSError):
            continue
        run = env.get(RUN_ID_VARIABLE, "")
        if run.isdigit() and owners.get(int(run)) == env.get(OWNER_VARIABLE):
            found.setdefault(int(run), []).append(process)
    return found


def is_alive(owner: Owner) -> bool:
    me = this_process()
    if owner.pid == me.pid:
        return owner.token == me.token
    return is_running(owner.pid, owner.started)


def is_running(pid: int, started: str | None) -> bool:
    """Whether ``pid`` is a live process, and the same one that had start marker ``started``.

    An unknown marker (``None``, or one written in another format by an older release) cannot tell
    a reused pid apart: the pid alone decides, erring on the side of a live process.
    """
    process = find(pid)
    if process is None:
        return False
    return same_start(started, marker_of(process))


def find(pid: int) -> psutil.Process | None:
    """The live process ``pid``; None if there is none, or only a zombie waiting to be reaped."""
    # 0 and negative pids address process groups in kill(): never an owner or a job.
    if pid <= 0:
        return None
    try:
        process = psutil.Process(pid)
        # A zombie has finished: its parent (in a container, a PID 1 that never reaps) has not
        # collected it yet.
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
    except psutil.NoSuchProcess:
        return None
    except psutil.AccessDenied:
        pass  # it exists, it belongs to another user
    return process


def start_marker(pid: int) -> str | None:
    """The start marker of the live process ``pid``, None if it is gone or will not say."""
    process = find(pid)
    return None if process is None else marker_of(process)


def marker_of(process: psutil.Process) -> str | None:
    """``<boot id>:<start ticks>`` on Linux, ``t:<start time>`` elsewhere; None if unreadable.

    Linux: psutil's start time is the boot time plus the start ticks, and the boot time moves when
    the wall clock is set, so a stored time would stop matching its own process after an NTP step.
    The ticks since boot never change, and the boot id tells two boots apart. The format is the one
    earlier releases wrote, so their markers still compare. Elsewhere the start time is stored by
    the kernel as it was at creation and never changes.
    """
    try:
        created = process.create_time()
        if _BOOT_ID:
            ticks = round((created - psutil.boot_time()) * _CLOCK_TICKS)
            return f"{_BOOT_ID}:{ticks}"
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return f"t:{created:.6f}"


def same_start(recorded: str | None, current: str | None) -> bool:
    """False only when both markers are known, in one format, and differ."""
    if recorded is None or current is None:
        return True
    if (":" in recorded) != (":" in current):
        return True  # Windows releases before psutil wrote a bare FILETIME
    return recorded == current


if sys.platform == "linux":

    def _boot_id() -> str:
        try:
            return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        except OSError:
            return ""

    _BOOT_ID = _boot_id()
    _CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
else:
    _BOOT_ID = ""
    _CLOCK_TICKS = 0
