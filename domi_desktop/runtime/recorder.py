"""The engine's one writer: every write of the running engine (a wake's claims, run starts, job
pids, results, manual and resumed runs, waiting runs, retention) in order, on one thread with a
connection of its own, so the loop thread never waits for the disk or for another process's lock.

A write the database cannot take now (another process holds its write lock, the disk is full,
the shared store's server is away: ``StoreUnavailable``) is tried again, the same transaction,
with backoff, for as long as it takes: what was handed over is never dropped, and later writes
wait behind it, so they land in the order they were given. The loop hears once that writes are
held up, and once that they go through again (``on_trouble``).

Results come back on the loop thread (``Loop.call_soon``), always, error or not: the engine and
the scheduler must hear about every task they hand over. ``threaded=False`` runs each task on the
caller's thread at once, with no second try, and calls back before ``submit`` returns: the unit
tests drive it that way.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from domi_desktop.actions import identity
from domi_desktop.errors import StoreError, StoreUnavailable
from domi_desktop.ports import Loop
from domi_desktop.store import Store
from domi_desktop.store.writer import Writer

log = logging.getLogger(__name__)

T = TypeVar("T")
Task = Callable[[Writer], T]
Done = Callable[[T | Exception], None]
Trouble = Callable[[StoreUnavailable | None], None]
_Job = tuple[Callable[[Writer], object], Callable[[object], None]]

RETRY_FIRST, RETRY_MAX = 0.5, 30.0
"""Backoff, in seconds, between two tries of a write the database could not take."""
CLOSE_PATIENCE = 10.0
"""Seconds ``close`` keeps trying to write what it was given before it gives up (and says so)."""


def _ignore(_outcome: object) -> None:
    pass


class Recorder:
    def __init__(
        self,
        store: Store,
        loop: Loop,
        *,
        threaded: bool = True,
        backoff: tuple[float, float] = (RETRY_FIRST, RETRY_MAX),
    ) -> None:
        self._store = store
        self._loop = loop
        self._threaded = threaded
        self._backoff = backoff
        self._writer: Writer | None = None
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        """Serialises the tasks run on their callers' threads (``threaded=False``)."""
        self._pids_lock = threading.Lock()
        self._pids: list[tuple[int, int, str | None]] = []
        self._pids_queued = False
        self._closing = threading.Event()
        self._give_up_at: float | None = None
        self._troubled = False
        self._halted: str | None = None
        self.on_trouble: Trouble = _ignore

    def submit(self, task: Task[T], done: Done[T] = _ignore) -> None:
        """Run ``task`` with the recorder's writer, after every task handed over before it;
        ``done`` gets its result or its exception, on the loop thread. Any thread may call."""
        job: _Job = (task, done)  # type: ignore[assignment]
        if not self._threaded:
            with self._lock:
                outcome = self._run(task)
            done(outcome)
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="domi-recorder", daemon=True
                )
                self._thread.start()
        self._jobs.put(job)

    def record_job(self, run_id: int, pid: int) -> None:
        """A job's process, on record soon for a later start to stop what a crash left. Called
        by the job supervisor as each job starts; returns at once. The pids that arrive while a
        write is on its way go in the next transaction together: hundreds of jobs starting at a
        minute boundary are a handful of transactions, not one (and an fsync) each."""
        # The marker is read now, while the job's process exists for sure (not yet reaped).
        entry = (run_id, pid, identity.start_marker(pid))
        with self._pids_lock:
            self._pids.append(entry)
            if self._pids_queued:
                return
            self._pids_queued = True
        self.submit(self._write_pids, self._pids_written)

    def halt(self, reason: str) -> None:
        """Write nothing more, ever (the database file was replaced): each task handed over
        from now on fails with ``reason``; the writer's connection is closed."""
        self._halted = reason

    def close(self, patience: float = CLOSE_PATIENCE) -> None:
        """Write what was handed over, trying ``patience`` seconds at most, then close."""
        self._give_up_at = time.monotonic() + patience
        self._closing.set()
        thread = self._thread
        if thread is not None:
            self._jobs.put(None)
            thread.join(patience + 10.0)
            self._thread = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _write_pids(self, writer: Writer) -> int:
        with self._pids_lock:
            batch, self._pids, self._pids_queued = self._pids, [], False
        if batch:
            writer.record_jobs(batch)
        return len(batch)

    @staticmethod
    def _pids_written(outcome: int | Exception) -> None:
        if isinstance(outcome, Exception):
            log.warning("the processes of some jobs could not be recorded: %s", outcome)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            task, done = job
            outcome = self._run(task)
            if isinstance(outcome, Exception) and self._closing.is_set():
                # The loop no longer runs: say here what its callback would have said.
                log.error("a write was lost as the app quit: %s", outcome)
            self._loop.call_soon(partial(done, outcome))

    def _run(self, task: Callable[[Writer], T]) -> T | Exception:
        if self._halted is not None:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            return StoreError(self._halted)
        try:
            if self._writer is None:
                self._writer = self._store.writer()
                if self._threaded:
                    self._writer.patience = self._patience
            outcome = task(self._writer)
        except Exception as error:  # handed to ``done``: the caller decides what it means
            return error
        if self._troubled:
            self._troubled = False
            self._loop.call_soon(partial(self.on_trouble, None))
        return outcome

    def _patience(self, error: StoreUnavailable, tries: int) -> bool:
        """On the recorder's thread: wait, and try the same transaction again."""
        give_up_at = self._give_up_at
        if self._halted is not None or (give_up_at is not None and time.monotonic() >= give_up_at):
            return False
        if not self._troubled:
            self._troubled = True
            log.warning("writes are held up, kept and tried again: %s", error)
            self._loop.call_soon(partial(self.on_trouble, error))
        first, longest = self._backoff
        delay = min(first * 2 ** (tries - 1), longest)
        if give_up_at is not None:
            delay = min(delay, max(0.0, give_up_at - time.monotonic()))
        if give_up_at is None:
            self._closing.wait(delay)  # closing cuts a long wait short, then counts the time
        else:
            time.sleep(delay)
        return True
