"""The store's worker: the runtime's bulk writes (a wake's claims, run starts and ends, retention)
on one thread with a connection of its own, so the loop thread never waits for the disk.

Results come back on the loop thread (``Loop.call_soon``), always, error or not: the runtime and
the scheduler must hear about every task they hand over. ``threaded=False`` runs each task on the
caller's thread at once and calls back before ``submit`` returns: the tests drive it that way.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from domi_desktop.ports import Loop
from domi_desktop.store import Store
from domi_desktop.store.claims import Writer

T = TypeVar("T")
Task = Callable[[Writer], T]
Done = Callable[[T | Exception], None]
_Job = tuple[Callable[[Writer], object], Callable[[object], None]]


class StoreWorker:
    def __init__(self, store: Store, loop: Loop, *, threaded: bool = True) -> None:
        self._store = store
        self._loop = loop
        self._threaded = threaded
        self._writer: Writer | None = None
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, task: Task[T], done: Done[T]) -> None:
        """Run ``task`` with the worker's writer; ``done`` gets its result or its exception."""
        job: _Job = (task, done)  # type: ignore[assignment]
        if not self._threaded:
            done(self._run(task))
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="domi-store", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def close(self, timeout: float = 10.0) -> None:
        """Finish the tasks already handed over, then close the worker's connection."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout)
            self._thread = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            task, done = job
            outcome = self._run(task)
            self._loop.call_soon(partial(done, outcome))

    def _run(self, task: Callable[[Writer], T]) -> T | Exception:
        try:
            if self._writer is None:
                self._writer = self._store.writer()
            return task(self._writer)
        except Exception as error:  # handed to ``done``: the caller decides what it means
            return error
