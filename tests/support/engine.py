"""The app's engine on its own thread, as the tray app runs it, for tests of the windows and the
host: started, asked things on its own thread, and stopped in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from PySide6.QtWidgets import QApplication

from domi_desktop.app.engine import EngineHandle, EngineThread
from domi_desktop.app.host import Host
from domi_desktop.store import Store

T = TypeVar("T")
PATIENCE = 60.0
"""Seconds a call on the engine's thread may take on a loaded machine (a safety net)."""


class RunningEngine:
    def __init__(self, thread: EngineThread, host: Host, handle: EngineHandle) -> None:
        self.thread = thread
        self.host = host
        """For ``call`` only: touched on the engine's thread."""
        self.handle = handle

    def call(self, work: Callable[[Host], T]) -> T:
        """``work(host)`` on the engine's thread; its result, or what it raised."""
        done = threading.Event()
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append((True, work(self.host)))
            except BaseException as error:  # handed back to the test's thread
                outcome.append((False, error))
            done.set()

        self.host.loop.call_soon(run)
        if not done.wait(PATIENCE):
            raise TimeoutError("the engine's thread did not answer")
        ok, value = outcome[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def wait_started(self) -> None:
        """The start-up wake (the catch-up at start) has been decided."""
        deadline = time.monotonic() + PATIENCE
        while not self.call(lambda host: host.runtime.driver.last_wake is not None):
            if time.monotonic() > deadline:
                raise TimeoutError("the engine's start-up wake did not come")
            time.sleep(0.01)

    def reload(self) -> None:
        """The schedules read again from the store (written there by the test), and the
        windows' picture of the engine brought up to date."""
        self.call(lambda host: host.runtime.driver.reload())
        self.settle()

    def settle(self) -> None:
        """The engine's picture as it is now has reached the GUI thread."""
        self.call(lambda host: host.picture_now())
        QApplication.processEvents()


@contextmanager
def running_engine(store: Store, *, begin: bool = True, **options: Any) -> Iterator[RunningEngine]:
    """The engine on its thread (``begin``: serving, as the app does after the tray is up)."""
    thread = EngineThread(store, gui=True, **options)
    host = thread.start_engine()
    handle = EngineHandle(host)
    try:
        engine = RunningEngine(thread, host, handle)
        if begin:
            thread.begin()
            engine.wait_started()
            engine.settle()
        yield engine
    finally:
        stopped = thread.stop_engine()
        handle.close()
        assert stopped, "the engine did not stop"
