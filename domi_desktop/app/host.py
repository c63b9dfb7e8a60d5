"""A running instance, with or without a GUI: lock, runtime, RPC server, wake sources, logging."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from domi_desktop import __version__
from domi_desktop.app.logs import log_event, log_wake
from domi_desktop.app.qtloop import QtLoop
from domi_desktop.app.waking import start_waking
from domi_desktop.clock import SystemClock
from domi_desktop.errors import DomiError, StoreError
from domi_desktop.events import Event, RunFinished, StoreProblem
from domi_desktop.frontdoor.rpc.dispatch import DEFER, Responder
from domi_desktop.frontdoor.rpc.instance import socket_name
from domi_desktop.frontdoor.rpc.server import Connection, RpcServer
from domi_desktop.frontdoor.rpc.socket_path import SocketDirError
from domi_desktop.frontdoor.service import METHODS, Service
from domi_desktop.frontdoor.settings import load_settings, settings_path
from domi_desktop.frontdoor.wire import run_json
from domi_desktop.model import WakeReason
from domi_desktop.platform.conditions import condition_source_for_platform
from domi_desktop.platform.filewatch import FileWatch
from domi_desktop.platform.inhibit import sleep_inhibitor_for_platform
from domi_desktop.platform.sleeplog import boot_clock
from domi_desktop.ports import ConditionSource, SecretStore, SleepInhibitor
from domi_desktop.runtime.diary import BACK_FILL, Diary
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.placement import UNREACHABLE
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.runtime.view import picture
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import KeyringSecretStore
from domi_desktop.store import Store

log = logging.getLogger("domi_desktop")

PICTURE_EVERY = 0.1
"""Seconds between two pictures of the engine for the windows while it keeps changing."""
OFF_LOOP = ("schedule.preview", "schedule.simulate")
"""Pure methods whose work grows with their parameters: run on worker threads, so that a batch of
them never holds the loop that wakes the scheduler and answers everyone else."""


class Host(QObject):
    """The scheduler, its store and its socket; the tray app and ``--headless`` both run one, on
    the engine's thread (``app.engine``). Its signals reach a window's slot queued."""

    show_requested = Signal()
    quit_requested = Signal()
    woke = Signal(object, str)
    events = Signal(object)
    """The runtime's events since the last emit, as a list, in order."""
    pictured = Signal(object)
    """A new ``runtime.view.EngineState``: at most every ``PICTURE_EVERY`` seconds, after a change."""
    schedules_changed = Signal(int)
    """One schedule was created, edited, enabled, disabled or deleted through the service."""
    store_changed = Signal()
    """The schedules changed in a way the service did not see (another process): re-read all."""

    def __init__(
        self,
        store: Store,
        *,
        gui: bool,
        secrets: SecretStore | None = None,
        parent: QObject | None = None,
        conditions: ConditionSource | None = None,
        inhibitor: SleepInhibitor | None = None,
    ) -> None:
        """``conditions`` and ``inhibitor`` default to this OS's (network, power, sleep)."""
        super().__init__(parent)
        self.store = store
        self.gui = gui
        self.clock = SystemClock()
        self.loop = QtLoop(self)
        self.secrets = secrets or KeyringSecretStore()
        # Read once here for the runtime's defaults (alerts, the catch-up burst); the tray reads
        # the same file for what it shows.
        settings = load_settings(settings_path(store.data_dir))
        self.inhibitor = inhibitor or sleep_inhibitor_for_platform()
        """Held while a job with keep_awake runs, and through the runs of a wake the app caused."""
        self.runtime = Runtime(
            store,
            self.clock,
            self.loop,
            self.secrets,
            on_wake=self._on_wake,
            recorder=Recorder(store, self.loop),
            conditions=conditions or condition_source_for_platform(),
            inhibitor=self.inhibitor,
            alerts=settings.alerts(),
            burst=settings.catch_up_burst,
        )
        self.service = Service(
            store,
            self.clock,
            on_change=self._changed,
            next_fire=self.runtime.driver.next_fire,
            secrets=self.secrets,
        )
        methods = {
            name: _bind(method, self.service)
            for name, method in METHODS.items()
            if name not in OFF_LOOP
        }
        self._workers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="domi-rpc")
        self.rpc = RpcServer(
            methods,
            {
                **{name: partial(self._off_loop, METHODS[name]) for name in OFF_LOOP},
                "schedule.run_now": self._run_now,
                "app.status": lambda _c, _p, _r: self.status(),
                "app.show": self._show,
                "app.quit": self._quit,
                "events.subscribe": self._subscribe,
                "run.stop": self._stop_run,
            },
            self.loop.call_soon,
            self,
        )
        self.runtime.subscribe(self._on_event)
        self.diary = Diary(store, self.clock, self.runtime.recorder, boot_clock=boot_clock())
        """The machine's own story: awake, asleep, off (the Timeline's)."""
        self._picture = QTimer(self)
        self._picture.setSingleShot(True)
        self._picture.setInterval(round(PICTURE_EVERY * 1000))
        self._picture.timeout.connect(self._take_picture)
        self._told: list[Event] = []
        """Events not yet emitted: those of one turn of the loop go out as one list."""
        self._waiting: dict[int, list[Responder]] = {}
        self._wake_sources: list[Any] = []
        self._zones: Any = None
        self.runtime.changes.subscribe(self._schedules_moved)
        self.waking = start_waking(self.runtime, self.inhibitor, self.woke)
        """Wake to run: the OS's wake alarm, and the machine sent back to sleep after."""
        self.started_at: datetime | None = None
        # A shared (PostgreSQL) store tells of other machines' edits at once; on SQLite the
        # file seen changing does (``_look_at_file``).
        self._listener = store.listener(self._heard_change, self._link_status)
        self._file_watch: FileWatch | None = None
        self._seen_elsewhere = 0
        self._replaced: str | None = None
        """Why nothing more is written: the SQLite file was replaced under the app."""

    # -- start and stop ------------------------------------------------------------------------

    def start(self) -> None:
        self.started_at = self.clock.now()
        try:
            listening = self.rpc.listen(socket_name(self.store.data_dir))
        except SocketDirError as error:
            log.warning("%s", error)
            listening = False
        if not listening:
            log.warning("no RPC socket: the CLI will use the database directly")
        self._start_wake_sources()
        self.diary.start()
        self._workers.submit(self._read_os_sleeps, self.clock.now() - BACK_FILL)
        if self._listener is not None:
            self._listener.start()
        elif not self.store.shared:
            self.store.stamp_file()  # a copy over the file is then told from SQLite's writes
            self._seen_elsewhere = self.store.changes_elsewhere()
            path = self.store.path
            self._file_watch = FileWatch(
                [path, path.with_name(path.name + "-wal"), self.store.data_dir], self
            )
            self._file_watch.touched.connect(self._look_at_file)
        # The first wake runs the start-up catch-up; after the loop is running, so a slow
        # keyring or a long catch-up never delays the tray icon.
        self.loop.call_soon(self._start_runtime)
        log.info(
            "domi-desktop %s, data in %s, socket %s",
            __version__,
            self.store.data_dir,
            self.rpc.name(),
        )

    def stop(self) -> None:
        self.waking.close()  # a systemd timer outlives the app: nobody would run the job
        if self._listener is not None:
            self._listener.stop()
        if self._file_watch is not None:
            self._file_watch.close()
        for source in self._wake_sources:
            source.stop()
        self.diary.stop()  # before the runtime closes the recorder that writes it
        self.runtime.stop()
        self._picture.stop()
        self._workers.shutdown(wait=False, cancel_futures=True)
        self.rpc.close()
        log.info("stopped")

    def _start_wake_sources(self) -> None:
        from domi_desktop.platform.appnap import AppNapActivity
        from domi_desktop.platform.resume import resume_source_for_platform
        from domi_desktop.platform.timezone import ZoneWatcher

        resume = resume_source_for_platform()
        if resume.start(self.on_loop(self._resumed), self.on_loop(self.diary.sleeping)):
            self._wake_sources.append(resume)
            log.info("listening for resume from sleep: %s", resume.status)
        else:
            log.info("no resume signal (%s); the clock watchdog covers sleeps", resume.status)
        if sys.platform == "darwin":
            awake = AppNapActivity()
            if awake.start():
                self._wake_sources.append(awake)
            log.info("App Nap: %s", awake.status)
        self._zones = ZoneWatcher(self.clock.now)

    # -- state ---------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        driver = self.runtime.driver
        last = driver.last_wake
        try:
            schedules: int | None = self.store.count_schedules()
            problem = None
        except StoreError as error:
            # A database that cannot be read is what status is asked about then: said, not raised.
            schedules, problem = None, str(error)
        return {
            "running": True,
            "pid": os.getpid(),
            "socket": self.rpc.name(),
            "version": __version__,
            "data_dir": str(self.store.data_dir),
            "gui": self.gui,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "last_wake": {"at": last.at.isoformat(), "reason": last.reason} if last else None,
            "next_wake": driver.next_wake.isoformat() if driver.next_wake else None,
            "schedules": schedules,
            "running_runs": self.runtime.running_runs(),
            "paused": driver.paused,
            "wake": self.waking.describe(),
            **self._sharing_status(problem),
        }

    def set_paused(self, paused: bool) -> None:
        """ "Pause all" on or off: recorded as one pause (the diary), every schedule planned
        again at once."""
        if paused != self.runtime.driver.paused:
            self.diary.paused(paused)
        self.runtime.driver.set_paused(paused)

    def _sharing_status(self, problem: str | None) -> dict[str, Any]:
        """This machine's name and share of the store: what it does not claim, and why; and what
        keeps the store from being read (``problem``)."""
        if self.store.shared and (problem is not None or self.runtime.link_problem is not None):
            problem = UNREACHABLE
        problem = problem or self._replaced or self.runtime.store_problem
        return {
            "machine": self.store.machine,
            "store": {
                "shared": self.store.shared,
                "location": self.store.location,
                "problem": problem,
            },
            "not_here": {str(key): why for key, why in sorted(self.runtime.not_here().items())},
        }

    # -- plumbing ------------------------------------------------------------------------------

    def on_loop(self, call: Callable[[], None]) -> Callable[[], None]:
        """``call`` as a callable any thread may call: it runs on the engine's loop."""
        return lambda: self.loop.call_soon(call)

    def picture_soon(self) -> None:
        """The windows get a new picture of the engine within ``PICTURE_EVERY`` seconds."""
        if not self._picture.isActive():
            self._picture.start()

    def picture_now(self) -> None:
        self._picture.stop()
        self._take_picture()

    def _take_picture(self) -> None:
        self.pictured.emit(picture(self.runtime))

    def _on_wake(self, plan: WakePlan, reason: WakeReason) -> None:
        log_wake(plan, reason)
        self.diary.tick()
        self.rpc.ensure_listening()
        # Piggyback on the scheduler's own tick (at most a minute apart) rather than a timer of
        # its own: an idle app wakes the CPU once a minute, no more. Clock jumps are checked on
        # the same tick by the driver.
        if (
            reason in (WakeReason.timer, WakeReason.clock_jump)
            and self._zones is not None
            and self._zones.check()
        ):
            self.loop.call_soon(partial(self._wake, WakeReason.tz_change))
        # The wake's events first: its notice is made of the fires they announce.
        self._tell()
        self.woke.emit(plan, reason)
        self.picture_soon()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StoreProblem):
            log.error("cannot write to the database: %s", event.message)
        log_event(event)
        self.rpc.broadcast(event.kind, event.to_json)
        if isinstance(event, RunFinished):
            for respond in self._waiting.pop(event.run_id, []):
                respond(run_json(self.store.get_run(event.run_id)))
        if not self._told:
            self.loop.call_soon(self._tell)
        self._told.append(event)

    def _tell(self) -> None:
        told, self._told = self._told, []
        if told:
            self.events.emit(told)
            self.picture_soon()

    def _look_at_file(self) -> None:
        """The database file changed: if another process changed a schedule, plan again now
        (the planner's re-read tells the windows), not at the next wake. If another file took
        its place (a restore), write nothing more to the one open here, and say so."""
        if self._replaced is not None:
            return
        replaced = self.store.replaced()
        if replaced is not None:
            self._seal(replaced)
            return
        try:
            elsewhere = self.store.changes_elsewhere()
        except DomiError as error:
            log.warning("the database changed and cannot be read: %s", error)
            return
        if elsewhere != self._seen_elsewhere:
            self._seen_elsewhere = elsewhere
            self._wake(WakeReason.edit)

    def _seal(self, why: str) -> None:
        """Writing on to the file open here would undo the restore: its log would meet the new
        file at the next start. The user asks for the new file by starting the app again."""
        self._replaced = why
        self.runtime.recorder.halt(why)
        self.runtime.link_lost(why)
        try:
            self.store.seal()
        except DomiError as error:
            log.warning("the replaced database file could not be sealed: %s", error)
        self._on_event(StoreProblem(why, 0))

    def _heard_change(self) -> None:
        """From the listener's thread: another instance changed a schedule; re-read them all."""
        self.loop.call_soon(partial(self._wake, WakeReason.edit))

    def _link_status(self, problem: str | None) -> None:
        """From the listener's thread: the shared store's link is lost (``problem``) or back."""
        self.loop.call_soon(partial(self.runtime.link_lost, problem))
        if problem is None:
            log.info("listening to %s for other machines' edits", self.store.location)
            return
        self.loop.call_soon(partial(self._on_event, StoreProblem(problem, 0)))

    def _start_runtime(self) -> None:
        self.runtime.start()

    def _wake(self, reason: WakeReason) -> None:
        self.runtime.driver.wake(reason)

    def _resumed(self) -> None:
        self.diary.resumed()
        self._wake(WakeReason.resume)

    def _read_os_sleeps(self, since: datetime) -> None:
        """On a worker: the OS's log of sleeps, handed to the diary on the loop."""
        from domi_desktop.platform.sleeplog import read_os_sleeps

        try:
            found = read_os_sleeps(since)
        except Exception:  # a back-fill is a nicety: the app runs on without it
            log.exception("the OS's log of sleeps could not be read")
            return
        if found is not None:
            source, parsed = found
            self.loop.call_soon(partial(self.diary.back_fill, parsed, source))

    def _changed(self, schedule_id: int | None) -> None:
        self.runtime.schedule_changed(schedule_id)

    def _schedules_moved(self, schedule_id: int | None) -> None:
        """The change feed, to the windows: one schedule, or any of them (re-read them all)."""
        if schedule_id is None:
            self.store_changed.emit()
        else:
            self.schedules_changed.emit(schedule_id)

    def _run_now(
        self, _connection: Connection, params: Mapping[str, Any], respond: Responder
    ) -> Any:
        schedule_id = Service._id(params)
        wait = bool(params.get("wait"))

        def recorded(outcome: int | Exception) -> None:
            if isinstance(outcome, Exception):
                respond(outcome)
            elif wait:
                self._waiting.setdefault(outcome, []).append(respond)
            else:
                respond({"run_id": outcome})

        # The run's id comes from the recorder, which never makes the loop wait for the disk.
        self.runtime.run_now(schedule_id, recorded)
        return DEFER

    def _stop_run(
        self, _connection: Connection, params: Mapping[str, Any], _respond: Responder
    ) -> Any:
        run_id = Service._id(params)
        return {"id": run_id, "stopping": self.runtime.stop_run(run_id)}

    def _off_loop(
        self,
        method: Callable[[Service, Mapping[str, Any]], Any],
        _connection: Connection,
        params: Mapping[str, Any],
        respond: Responder,
    ) -> Any:
        def done(future: Future[Any]) -> None:
            if future.cancelled():  # the app is stopping
                return
            error = future.exception()
            self.loop.call_soon(partial(respond, future.result() if error is None else error))

        self._workers.submit(method, self.service, params).add_done_callback(done)
        return DEFER

    def _show(
        self, _connection: Connection, _params: Mapping[str, Any], _respond: Responder
    ) -> Any:
        self.show_requested.emit()
        return {"shown": self.gui}

    def _quit(self, connection: Connection, _params: Mapping[str, Any], respond: Responder) -> Any:
        respond({"quitting": True})
        connection.flush()
        self.loop.call_soon(self.quit_requested.emit)
        return DEFER

    def _subscribe(
        self, connection: Connection, _params: Mapping[str, Any], _respond: Responder
    ) -> Any:
        connection.subscribed = True
        return {"subscribed": True, "events": ["schedule.fire", "run.finished", "store.problem"]}


def _bind(
    method: Callable[[Service, Mapping[str, Any]], Any], service: Service
) -> Callable[[Mapping[str, Any]], Any]:
    return lambda params: method(service, params)
