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
    """Shared by whoever runs the action and whoever holds the ``RunningAction``.

    An HTTP request's thread waits for a predicate over its helper's flag, a stop request or a
    deadline, whichever comes first, without polling (``wait``; the helper calls ``notify``). A
    command's supervisor is told of a stop request instead (``on_stop``).
    """

    def __init__(self, on_started: Callable[[int], None] | None = None) -> None:
        self._cond = threading.Condition()
        self._stop_reason: str | None = None
        self._on_started = on_started
        self._stop_listener: Callable[[], None] | None = None
        self._pause_listener: Callable[[bool], None] | None = None
        self.pid: int | None = None
        """The job's process id once it has started (commands only)."""

    def started(self, pid: int) -> None:
        """The job's process is running: note its pid and tell ``on_started`` (at once, on the
        thread that started it, so the pid is on record before the job has done much)."""
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
            listener = self._stop_listener
        if listener is not None:
            listener()

    def on_stop(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` (on the requester's thread) when a stop is requested, at once if one
        was before this; None: no longer."""
        with self._cond:
            self._stop_listener = listener
            requested = self._stop_reason is not None
        if listener is not None and requested:
            listener()

    def request_pause(self, paused: bool) -> bool:
        """Pause the job's whole tree where it is (``True``) or let it go on; ``False`` when
        nothing can be paused (an HTTP request, a job not started yet)."""
        with self._cond:
            listener = self._pause_listener
        if listener is None:
            return False
        listener(paused)
        return True

    def on_pause(self, listener: Callable[[bool], None] | None) -> None:
        with self._cond:
            self._pause_listener = listener

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
