"""One thread that looks after every command job of this process: their output, exits and deadlines.

A thread per job (and two helpers each, one reading the output and one waiting for the exit)
made a wake that starts 1,000 jobs a crowd of 3,000 threads taking turns at the GIL, and the GUI
thread waited its turn behind them. Here the jobs' pipes (and, on Linux, their pidfds) are watched
by one selector: a burst of jobs is one thread's work, and the GUI thread shares the GIL with it
alone. Where a pipe or an exit cannot be watched so (a pipe on Windows, an exit outside Linux), a
small helper thread waits for it and hands the event to this thread.

Everything here runs on the supervisor's thread, except ``call_soon``.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import select
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

Callback = Callable[[], None]
CALLS_A_TURN = 16
"""Calls (job starts, mostly) taken between two looks at the jobs' pipes, exits and timers."""


@dataclass(order=True, slots=True)
class Timer:
    when: float
    order: int
    callback: Callback | None = field(compare=False)

    def cancel(self) -> None:
        """It will not run; what it would have run is let go at once (a job's timeout timer
        would otherwise keep the whole job in memory until the timeout's time)."""
        self.callback = None


class Supervisor:
    """An event loop on a daemon thread of its own: ready file descriptors, timers, calls.

    The process's own (``supervisor()``) lives as long as the process: on Linux a job asks for
    SIGTERM when the thread that started it exits (``PR_SET_PDEATHSIG``), and this is that
    thread. Another one (a test's) is stopped by whoever made it, with ``close``.
    """

    def __init__(self) -> None:
        self._watches = _Watches()
        self._lock = threading.Lock()
        self._calls: deque[Callback] = deque()
        self._timers: list[Timer] = []
        self._reports: list[Callback] = []
        self._order = itertools.count()
        self._ended = False
        # A socket pair, not a pipe: Windows' select() watches sockets only.
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)
        self._watches.add(self._wake_reader.fileno(), self._drain_wakes)
        self._thread = threading.Thread(target=self._loop, name="domi-jobs", daemon=True)
        self._thread.start()

    def call_soon(self, callback: Callback) -> None:
        """Run ``callback`` on the supervisor's thread. Any thread may call this."""
        with self._lock:
            self._calls.append(callback)
            first = len(self._calls) == 1
        # One wake-up per batch: a burst of 1,000 calls is not 1,000 writes. A full pair holds
        # wake-ups enough.
        if first:
            with contextlib.suppress(BlockingIOError):
                self._wake_writer.send(b"\0")

    def call_later(self, delay: float, callback: Callback) -> Timer:
        """Run ``callback`` on the supervisor's thread in ``delay`` seconds (monotonic), unless
        the timer is cancelled first."""
        timer = Timer(time.monotonic() + delay, next(self._order), callback)
        heapq.heappush(self._timers, timer)
        return timer

    def report(self, callback: Callback) -> None:
        """Run ``callback`` at the end of this turn, on the supervisor's thread, from which alone
        this may be called: the ends of jobs that ended in one turn are told one after the other.
        An end told wakes the thread waiting for it (the GUI's); told between the system calls of
        the next job's end, each woke it anew to take the GIL and sleep again (the runner bench:
        woken 500 times for 1,000 jobs, not 65, with ~35 us of its CPU a job, not ~19)."""
        self._reports.append(callback)

    def close(self, timeout: float = 5.0) -> bool:
        """End the thread once the calls handed over before this one have run, and let its
        descriptors go; whether it ended within ``timeout`` seconds."""
        self.call_soon(self._end)
        self._thread.join(timeout)
        if self._thread.is_alive():
            return False
        self._watches.close()
        self._wake_reader.close()
        self._wake_writer.close()
        return True

    def _end(self) -> None:
        self._ended = True

    def watch(self, fd: int, callback: Callback) -> None:
        """Call ``callback`` whenever ``fd`` is ready to read, until ``unwatch``."""
        self._watches.add(fd, callback)

    def unwatch(self, fd: int) -> None:
        self._watches.remove(fd)

    def _loop(self) -> None:
        more = False
        while not self._ended:
            timeout = 0.0 if more else None
            # A job that ended before its deadline left its timer in the heap, cancelled: waking
            # for it would be a wake-up for nothing (after a burst, one for each such job).
            while self._timers and self._timers[0].callback is None:
                heapq.heappop(self._timers)
            if self._timers and not more:
                timeout = max(0.0, self._timers[0].when - time.monotonic())
            for ready in self._watches.ready(timeout):
                _run(ready)
            now = time.monotonic()
            while self._timers and self._timers[0].when <= now:
                callback = heapq.heappop(self._timers).callback
                if callback is not None:
                    _run(callback)
            # A turn takes a few calls, then looks at the jobs again: a wake's 2,500 starts in
            # one go kept every quick job of the burst alive (its log, its pipe) until the last
            # had started, 20 MB more at the peak, and their output unread meanwhile.
            with self._lock:
                calls = [self._calls.popleft() for _ in range(min(CALLS_A_TURN, len(self._calls)))]
                more = bool(self._calls)
            for call in calls:
                _run(call)
            reports, self._reports = self._reports, []
            for report in reports:
                _run(report)

    def _drain_wakes(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self._wake_reader.recv(4096):
                pass


if sys.platform == "linux":

    class _Watches:
        """Descriptors watched for reading, with what to call when one is: epoll itself, as
        ``selectors`` wraps it in a key object and two lookups for each descriptor, each time."""

        def __init__(self) -> None:
            self._epoll = select.epoll()
            self._callbacks: dict[int, Callback] = {}

        def add(self, fd: int, callback: Callback) -> None:
            self._epoll.register(fd, select.EPOLLIN)
            self._callbacks[fd] = callback

        def remove(self, fd: int) -> None:
            del self._callbacks[fd]
            with contextlib.suppress(OSError):  # as selectors: closed already, epoll let it go
                self._epoll.unregister(fd)

        def ready(self, timeout: float | None) -> list[Callback]:
            return [self._callbacks[fd] for fd, _events in self._epoll.poll(timeout)]

        def close(self) -> None:
            self._epoll.close()

else:

    class _Watches:
        """Descriptors watched for reading, with what to call when one is."""

        def __init__(self) -> None:
            self._selector = selectors.DefaultSelector()

        def add(self, fd: int, callback: Callback) -> None:
            self._selector.register(fd, selectors.EVENT_READ, callback)

        def remove(self, fd: int) -> None:
            self._selector.unregister(fd)

        def ready(self, timeout: float | None) -> list[Callback]:
            return [key.data for key, _ in self._selector.select(timeout)]

        def close(self) -> None:
            self._selector.close()


def _run(callback: Callback) -> None:
    try:
        callback()
    # A job's own handlers end their run on an error (``CommandJob``); this keeps the thread
    # that every other job depends on alive whatever a callback does.
    except Exception:
        log.exception("the job supervisor's callback %r failed", callback)


_lock = threading.Lock()
_supervisor: Supervisor | None = None


def supervisor() -> Supervisor:
    """This process's supervisor, started when first asked for."""
    global _supervisor
    with _lock:
        if _supervisor is None:
            _supervisor = Supervisor()
        return _supervisor
