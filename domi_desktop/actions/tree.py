"""A job's whole process tree, asked to stop or killed at once."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys

import psutil

from domi_desktop.actions import warden

if sys.platform == "win32":
    from domi_desktop.actions.winjob import JobObject, resume

log = logging.getLogger(__name__)


class ProcessTree:
    """A job's process and everything it started, short of processes that left on purpose.

    POSIX: the job leads a new session, so its process group holds its descendants. Windows: a Job
    Object holds them (``winjob``), and ends them if the app dies.

    The grace between asking and killing is POSIX's: SIGTERM, then SIGKILL once it is over. A
    Windows job has nothing to be asked with (no SIGTERM; started without a console, it gets no
    CTRL_BREAK_EVENT, and a windowless one reads no WM_CLOSE), so a stop or a timeout ends its
    whole Job Object at once (``TerminateJobObject``, exit code 1) and the grace is not used.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        warden.watch(pid)
        if sys.platform == "win32":
            self._job: JobObject | None = None
            try:
                self._job = JobObject.around(pid)
            except OSError as error:
                log.warning("process %s runs outside a Job Object: %s", pid, error)

    def let_run(self) -> None:
        """Windows: resume the process, started suspended, now that it is in its Job Object."""
        if sys.platform == "win32":
            resume(self.pid)

    def terminate(self) -> bool:
        """Ask the tree to stop; ``False`` when there was nobody left to ask (or no way to)."""
        if sys.platform == "win32":
            return False  # no way to ask (see the class): the caller kills at once
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self) -> None:
        """Stop the tree without asking."""
        if sys.platform == "win32":
            if self._job is not None:
                self._job.terminate()  # every process in it, orphans included
            else:
                _kill_descendants(self.pid)  # without a job, what the parent links still reach
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """The run is over; on Windows this ends what is still in its Job Object."""
        warden.release(self.pid)
        if sys.platform == "win32" and self._job is not None:
            self._job.close()


def _kill_descendants(pid: int) -> None:
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        for process in [*root.children(recursive=True), root]:
            with contextlib.suppress(psutil.Error):
                process.kill()
