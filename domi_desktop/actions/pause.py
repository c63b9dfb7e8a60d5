"""A job's whole process tree paused where it is and let go on, and a timeout that counts only the
time the job ran.

POSIX: SIGSTOP to the job's process group (its session: every child that did not leave on
purpose) and to each descendant psutil still finds outside it, SIGCONT the same way. Windows:
every process of the tree suspended (``NtSuspendProcess``, which psutil calls) and resumed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

import psutil


def _tree(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    return []


def pause_tree(pid: int) -> None:
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGSTOP)
    # Again for whatever psutil finds: a child in a session of its own, and, between the group's
    # stop and this listing, none can have been born (its parent is stopped).
    for process in _tree(pid):
        with contextlib.suppress(psutil.Error):
            process.suspend()


def resume_tree(pid: int) -> None:
    for process in reversed(_tree(pid)):
        with contextlib.suppress(psutil.Error):
            process.resume()
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGCONT)


class RunningClock:
    """The seconds a timeout has left, paused while the job is (``time.monotonic``)."""

    def __init__(self, timeout: float | None) -> None:
        self._left = timeout
        self._since: float | None = time.monotonic()
        """When the job last went on (``None`` while paused)."""

    @property
    def paused(self) -> bool:
        return self._since is None

    def pause(self) -> None:
        if self._since is None:
            return
        if self._left is not None:
            self._left = max(0.0, self._left - (time.monotonic() - self._since))
        self._since = None

    def resume(self) -> float | None:
        """The seconds the timeout has left from now (``None``: no timeout)."""
        if self._since is None:
            self._since = time.monotonic()
        return self._left
