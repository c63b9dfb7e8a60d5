"""The engine's thread, and the GUI thread's handle on it.

The engine (the host: its runtime, the socket server, the wake sources, the monitors, the session
triggers) is built, run and stopped on a ``QThread`` with an event loop of its own, so the GUI
thread only paints. The windows read the engine's picture (``runtime.view.EngineState``), handed
over whole by a queued signal, and the store through the readers' connection; what they ask of
the engine (run now, stop, pause, a schedule edited) is posted to the engine's loop.

The instance lock (``app.primary``) is taken before the thread starts: a second launch builds
nothing. Stopping, in this order, on the engine's thread: the session triggers, the monitors, the
host (its wake sources, the diary, the runtime: running jobs stopped and recorded, the recorder
drained and closed; the socket), then the thread's loop ends and the host is freed there; last,
on the caller's thread, the instance lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from domi_desktop.app.host import Host
from domi_desktop.app.monitoring import monitoring_of, start_monitoring
from domi_desktop.app.primary import PrimaryLock
from domi_desktop.app.qtloop import QtLoop
from domi_desktop.app.session import start_session_triggers
from domi_desktop.app.sleep_when_done import sleep_when_done_of
from domi_desktop.clock import SystemClock
from domi_desktop.errors import StoreError
from domi_desktop.frontdoor.service import Service
from domi_desktop.monitor.status import CheckStatus, PingTrial
from domi_desktop.ports import SecretStore
from domi_desktop.runtime.view import EngineState
from domi_desktop.store import Store

log = logging.getLogger("domi_desktop")

STOP_PATIENCE = 20.0
"""Seconds the engine's thread gets to stop in order (the runtime waits up to 5 s for jobs, the
recorder up to 10 s for the disk) before the app leaves without it."""

Outcome = Callable[[int | Exception], None]


class EngineThread(QThread):
    """Owns the engine's thread and everything that lives on it."""

    def __init__(
        self, store: Store, *, gui: bool, lock: PrimaryLock | None = None, **host_options: Any
    ) -> None:
        """``lock``: the instance lock, when the caller took it already."""
        super().__init__()
        self.setObjectName("domi-engine")
        self._store = store
        self._lock = lock or PrimaryLock(store.data_dir)
        self._gui = gui
        self._options = host_options
        self._ready = threading.Event()
        self._ended = threading.Event()
        self._failure: BaseException | None = None
        self.host: Host | None = None
        """Touched on the engine's thread only, once ``start`` has returned."""
        self._parts: list[Any] = []

    def start_engine(self) -> Host:
        """Take the instance lock, start the thread and build the host there; raises
        ``AlreadyRunning`` (nothing started), ``StoreError`` (a damaged database), or what
        building did.

        Every page is read once here (``quick_check``: 0.5 s at a million runs), by the primary
        only: an app left up on a damaged file would fire nothing for as long as it runs, while
        refused it says why at once."""
        if not self._lock.held:
            self._lock.take()
        try:
            self._store.check_integrity()
        except StoreError:
            self._lock.release()
            raise
        self.start()
        self._ready.wait()
        if self._failure is not None:
            self._ended.wait()
            self.wait()
            self._lock.release()
            raise self._failure
        assert self.host is not None
        return self.host

    def begin(self) -> None:
        """Start serving (on the engine's thread): the host, then the monitors and triggers."""
        host = self.host
        assert host is not None
        host.loop.call_soon(self._begin)

    def stop_engine(self, patience: float = STOP_PATIENCE) -> bool:
        """Stop everything on the engine's thread in order and end the thread; False when it did
        not end within ``patience`` seconds (then the app leaves without it)."""
        host = self.host
        if host is None or self._ended.is_set():
            return True
        host.loop.call_soon(self._stop_all)
        # A Python wait, not QThread.wait: it gives the interpreter lock up while it waits.
        ended = self._ended.wait(patience)
        if ended:
            self.wait()
            self._lock.release()
        else:  # the lock goes with the process
            log.error("the engine did not stop within %.0f s; leaving without it", patience)
        return ended

    def run(self) -> None:
        try:
            host = Host(self._store, gui=self._gui, **self._options)
        except BaseException as error:
            self._failure = error
            self._ready.set()
            self._ended.set()
            return
        self.host = host
        self._ready.set()
        try:
            self.exec()
        finally:
            # Freed here: a QObject is destroyed on the thread it lives on.
            self._parts.clear()
            self.host = None
            host.deleteLater()
            del host
            self._ended.set()

    def _begin(self) -> None:
        host = self.host
        assert host is not None
        host.start()
        self._parts = [start_monitoring(host), start_session_triggers(host)]

    def _stop_all(self) -> None:
        host = self.host
        assert host is not None
        for part in reversed(self._parts):
            try:
                part.stop()
            except Exception:  # the rest still stops
                log.exception("stopping %s failed", type(part).__name__)
        host.stop()
        self.quit()


class EngineHandle(QObject):
    """What the GUI thread holds of the engine: its picture, its signals, and commands posted to
    its loop. Lives on the GUI thread; implements ``ui.backend.AppBackend``."""

    events = Signal(object)
    woke = Signal(object, str)
    schedules_changed = Signal(int)
    store_changed = Signal()
    show_requested = Signal()
    quit_requested = Signal()
    changed = Signal()
    """A new picture of the engine arrived (``state``)."""

    def __init__(self, host: Host, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loop = host.loop
        self._host = host
        self._runtime = host.runtime
        self._here = QtLoop(self)
        self.store = host.store
        self.secrets: SecretStore = host.secrets
        self.gui = host.gui
        self.state = EngineState()
        self.service = Service(
            host.store,
            SystemClock(),
            on_change=self.schedule_edited,
            next_fire=self._next_fire,
            secrets=host.secrets,
        )
        # Signal to signal: the receiver lives on this thread, so each is queued here.
        host.events.connect(self.events)
        host.woke.connect(self.woke)
        host.schedules_changed.connect(self.schedules_changed)
        host.store_changed.connect(self.store_changed)
        host.show_requested.connect(self.show_requested)
        host.quit_requested.connect(self.quit_requested)
        host.pictured.connect(self._pictured)
        self._post(host.picture_soon)

    @property
    def engine(self) -> EngineHandle:
        return self

    def close(self) -> None:
        """The engine has stopped: what it said on its way out reaches no window."""
        self.blockSignals(True)

    def _post(self, call: Callable[[], None]) -> None:
        try:
            self._loop.call_soon(call)
        except RuntimeError:  # the engine has stopped and its loop is gone: nobody to ask
            log.info("the engine has stopped; a request from a window is dropped")

    def _pictured(self, state: EngineState) -> None:
        self.state = state
        self.changed.emit()

    def _next_fire(self, schedule_id: int) -> Any:
        return self.state.next_fire(schedule_id)

    # -- commands, posted to the engine's loop ------------------------------------------------

    def run_now(self, schedule_id: int, done: Outcome | None = None) -> None:
        """A manual run; ``done`` gets its id once it is on record (or why not), on this thread."""
        here = self._here.call_soon
        runtime = self._runtime

        def answered(outcome: int | Exception) -> None:
            if done is not None:
                here(lambda: done(outcome))

        self._post(lambda: runtime.run_now(schedule_id, answered))

    def stop_run(self, run_id: int, reason: str = "stopped by the user") -> None:
        runtime = self._runtime

        def stop() -> None:
            runtime.stop_run(run_id, reason)

        self._post(stop)

    def set_paused(self, paused: bool) -> None:
        # Shown at once; the engine's next picture says the same.
        self.state = replace(self.state, paused=paused)
        host = self._host
        self._post(lambda: host.set_paused(paused))

    def sleep_when_done(self, on: bool) -> None:
        """Put the computer to sleep when the running jobs finish (``runtime.sleep_when_done``),
        or no longer."""
        host = self._host
        self._post(lambda: sleep_when_done_of(host).set(on))

    def monitor_status(
        self, schedule_id: int, done: Callable[[tuple[CheckStatus, ...]], None]
    ) -> None:
        """The schedule's monitors as the engine last saw them; ``done`` on this thread."""
        host, here = self._host, self._here.call_soon

        def read() -> None:
            monitors = monitoring_of(host)
            found = () if monitors is None else monitors.status(schedule_id)
            here(lambda: done(found))

        self._post(read)

    def test_ping(self, schedule_id: int, done: Callable[[PingTrial], None]) -> None:
        """A test ping to the schedule's Healthchecks check, sent by the engine's monitors;
        ``done`` gets how it went, on this thread."""
        host, here = self._host, self._here.call_soon

        def answered(result: PingTrial) -> None:
            here(lambda: done(result))

        def send() -> None:
            monitors = monitoring_of(host)
            if monitors is None:
                answered(PingTrial(host.clock.now(), error="the monitors are not running"))
            else:
                monitors.test_ping(schedule_id, answered)

        self._post(send)

    def schedule_edited(self, schedule_id: int | None) -> None:
        """A window changed a schedule (None: several): shown at once here, and planned again
        by the engine (whose change feed then says it too)."""
        runtime = self._runtime
        self._post(lambda: runtime.schedule_changed(schedule_id))
        if schedule_id is None:
            self.store_changed.emit()
        else:
            self.schedules_changed.emit(schedule_id)
