"""What a run's worker thread waits on, and how an executor reports how the run ended."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from domi_desktop.model import RunStatus

log = logging.getLogger(__name__)


class Wake(Enum):
    done = "done"
    stopped = "stopped"
    deadline = "deadline"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an executor's part of a run ended; the runner adds the times, the tail and the log."""

    status: RunStatus
    reason: str | None = None
    exit_code: int | None = None


class RunControl:
    """Shared by a run's worker, its helper threads and whoever holds the ``RunningAction``.

    Helper threads set their own flag (an ``Event``) and call ``notify``; the worker waits for a
    predicate over those flags, a stop request or a deadline, whichever comes first, without
    polling.
    """

    def __init__(self, on_started: Callable[[int], None] | None = None) -> None:
        self._cond = threading.Condition()
        self._stop_reason: str | None = None
        self._on_started = on_started
        self._slot: threading.Semaphore | None = None
        self.pid: int | None = None
        """The job's process id once it has started (commands only)."""

    def take_start_slot(self, slots: threading.Semaphore) -> None:
        """Wait for one of ``slots`` to start the job in; given back by ``started`` (or by
        ``release_start_slot`` when the start goes no further). On the run's thread only."""
        slots.acquire()
        self._slot = slots

    def release_start_slot(self) -> None:
        slot, self._slot = self._slot, None
        if slot is not None:
            slot.release()

    def started(self, pid: int) -> None:
        """The job's process is running: note its pid and tell ``on_started`` (on this thread,
        at once, so the pid is on record before the job has done much)."""
        self.release_start_slot()
        self.pid = pid
        if self._on_started is None:
            return
        try:
            self._on_started(pid)
        # Not being able to record the pid must not cost the run itself.
        except Exception:
            log.exception("reporting the start of process %s failed", pid)

    @property
    def stop_reason(self) -> str | None:
        with self._cond:
            return self._stop_reason

    def request_stop(self, reason: str) -> None:
        with self._cond:
            # The first reason wins: it is the one the caller acted on.
            if self._stop_reason is None:
                self._stop_reason = reason
            self._cond.notify_all()

    def notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wait(self, done: Callable[[], bool], timeout: float | None, *, stoppable: bool) -> Wake:
        """Block until ``done()``, a stop request (if ``stoppable``) or ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if done():
                    return Wake.done
                if stoppable and self._stop_reason is not None:
                    return Wake.stopped
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return Wake.deadline
                self._cond.wait(remaining)


def timed_out(seconds: float, exit_code: int | None = None) -> Outcome:
    return Outcome(RunStatus.timed_out, f"timed out after {format_seconds(seconds)}", exit_code)


def format_seconds(seconds: float) -> str:
    """``0.5s``, ``5s``, ``1m30s``, ``2h``: short, for reasons shown in the history."""
    if seconds < 60:
        return f"{seconds:g}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(hours, "h"), (minutes, "m"), (secs, "s")]
    return "".join(f"{value}{unit}" for value, unit in parts if value)
