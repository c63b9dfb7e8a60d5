"""Start actions on background threads; stop them; wait for them."""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
from collections.abc import Callable
from typing import overload

from domi_desktop.actions.capture import DEFAULT_LOG_LIMITS, LogLimits, OutputCapture
from domi_desktop.actions.command import run_command
from domi_desktop.actions.control import Outcome, RunControl
from domi_desktop.actions.model import ActionRequest, ActionResult, check_action, resolve_secrets
from domi_desktop.errors import ActionError, SecretError
from domi_desktop.model import CommandAction, RunStatus
from domi_desktop.ports import Clock, SecretStore
from domi_desktop.secrets import Masker

log = logging.getLogger(__name__)

KILL_GRACE = 3.0
"""Seconds between asking a job's processes to stop (SIGTERM) and killing them (SIGKILL)."""
START_SLOTS = 2
"""Jobs being started at once. Starting one is Python work (its environment, its log, the
fork and exec): hundreds started together at a wake or a minute boundary kept hundreds of
threads asking for the GIL, and the GUI thread waited behind all of them; the others wait on a
semaphore, which costs nothing. Two, as only one holds the GIL at a time: a 1,000-schedule wake's
longest loop gap was 60 ms (median of 3) with four, 49 ms with two."""

OnFinished = Callable[[ActionResult], None]
OnStarted = Callable[[int], None]


class RunningAction:
    """A run in progress. ``stop`` and ``wait`` may be called from any thread."""

    def __init__(self, run_id: int, on_started: OnStarted | None = None) -> None:
        self.run_id = run_id
        self._control = RunControl(on_started)
        self._done = threading.Event()
        self._result: ActionResult | None = None

    @property
    def pid(self) -> int | None:
        """The job's process id, once it has started (``None`` for HTTP)."""
        return self._control.pid

    def stop(self, reason: str = "stopped") -> None:
        """Stop the run (the whole process tree); it ends ``interrupted`` with ``reason``.

        Returns at once: the tree gets SIGTERM, then SIGKILL after the grace, on the run's own
        thread. No effect on a run that has ended.
        """
        self._control.request_stop(reason)

    @overload
    def wait(self) -> ActionResult: ...
    @overload
    def wait(self, timeout: float) -> ActionResult | None: ...
    def wait(self, timeout: float | None = None) -> ActionResult | None:
        """The result, once the run has ended and ``on_finished`` has returned; ``None`` if
        ``timeout`` seconds passed first."""
        self._done.wait(timeout)
        return self._result


class ActionRunner:
    """Runs actions on background threads, never on the caller's.

    ``on_finished`` is called on the run's own thread: a Qt caller forwards it to the GUI thread
    (a queued signal). ``Clock`` gives the recorded start and finish times; timeouts use the
    monotonic clock of the threading primitives.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        kill_grace: float = KILL_GRACE,
        log_limits: LogLimits = DEFAULT_LOG_LIMITS,
    ) -> None:
        self._clock = clock
        self._kill_grace = kill_grace
        self._log_limits = log_limits
        self._lock = threading.Lock()
        self._running: set[RunningAction] = set()
        self._to_start: queue.SimpleQueue[threading.Thread] = queue.SimpleQueue()
        self._start_slots = threading.Semaphore(START_SLOTS)
        self._starter: threading.Thread | None = None

    def start(
        self,
        request: ActionRequest,
        on_finished: OnFinished,
        *,
        secrets: SecretStore | None = None,
        on_started: OnStarted | None = None,
    ) -> RunningAction:
        """Start ``request`` on a new thread and return at once.

        ``on_started(pid)`` is called on the run's thread as soon as a command's process runs
        (once per start, never for HTTP): the caller records the pid, so that a later start of the
        app can stop what is left of the job if this process dies.

        With ``secrets``, the action's secrets are read from that store on the run's thread (an
        unlock prompt of the OS keyring must not block the GUI), and a secret that cannot be read
        ends the run ``failed`` with reason ``secret unavailable: ...``: this is how the app and
        the CLI start a schedule's action. Without it, ``request.secrets`` is used as it is.
        """
        if secrets is not None and request.secrets:
            raise ValueError("pass the secrets either resolved in the request or as a store")
        running = RunningAction(request.run_id, on_started)
        with self._lock:
            self._running.add(running)
        thread = threading.Thread(
            target=self._work,
            args=(running, request, secrets, on_finished),
            name=f"domi-run-{request.run_id}",
            daemon=True,  # quitting the app must not wait for a job; it stops them first
        )
        self._hand_over(thread)
        return running

    def _hand_over(self, thread: threading.Thread) -> None:
        # ``Thread.start`` waits until the new thread has run, which takes the GIL from every
        # busy thread in turn: a catch-up launching hundreds of jobs froze the GUI that called
        # it for tens of milliseconds at a time. One starter thread waits instead.
        with self._lock:
            if self._starter is None:
                self._starter = threading.Thread(
                    target=self._start_each, name="domi-run-starter", daemon=True
                )
                self._starter.start()
        self._to_start.put(thread)

    def _start_each(self) -> None:
        while True:
            self._to_start.get().start()

    def run(
        self,
        request: ActionRequest,
        *,
        secrets: SecretStore | None = None,
        on_started: OnStarted | None = None,
    ) -> ActionResult:
        """``start`` and wait: for the CLI. Ctrl-C stops the job and returns its result."""
        running = self.start(request, lambda _result: None, secrets=secrets, on_started=on_started)
        try:
            return running.wait()
        except KeyboardInterrupt:
            # The job leads its own session, so the terminal's Ctrl-C did not reach it.
            running.stop("stopped: interrupted from the terminal (Ctrl-C)")
            return running.wait()

    def stop_all(self, reason: str) -> list[RunningAction]:
        """Stop every run in progress (before quitting, say); returns them to wait on."""
        with self._lock:
            running = list(self._running)
        for each in running:
            each.stop(reason)
        return running

    def _work(
        self,
        running: RunningAction,
        request: ActionRequest,
        store: SecretStore | None,
        on_finished: OnFinished,
    ) -> None:
        try:
            try:
                result = self._execute(running._control, request, store)
            # A bug must still end the run, or it would show as running forever.
            except Exception as error:
                log.exception("run %s: the action runner failed", request.run_id)
                now = self._clock.now()
                reason = f"internal error: {type(error).__name__}: {error}"
                result = ActionResult(
                    RunStatus.failed, reason, None, "", request.log_path, now, now
                )
            running._result = result
            on_finished(result)
        finally:
            running._control.release_start_slot()
            with self._lock:
                self._running.discard(running)
            running._done.set()

    def _execute(
        self, control: RunControl, request: ActionRequest, store: SecretStore | None
    ) -> ActionResult:
        started_at = self._clock.now()
        failure: str | None = None
        try:
            check_action(request.action)
            if store is not None:
                request = dataclasses.replace(
                    request, secrets=resolve_secrets(request.action, store)
                )
        except ActionError as error:
            failure = f"invalid action: {error}"
        except SecretError as error:
            failure = f"secret unavailable: {error}"
        masker = Masker(request.secrets.values())
        control.take_start_slot(self._start_slots)
        try:
            capture = OutputCapture(request.log_path, masker, self._log_limits)
        except OSError as error:
            return ActionResult(
                status=RunStatus.failed,
                reason=f"could not write the log file: {error.strerror}: {error.filename}",
                exit_code=None,
                output_tail="",
                log_path=request.log_path,
                started_at=started_at,
                finished_at=self._clock.now(),
            )
        with capture:
            stop_reason = control.stop_reason
            if failure is not None:
                outcome = Outcome(RunStatus.failed, failure)
            elif stop_reason is not None:
                outcome = Outcome(RunStatus.interrupted, stop_reason)
            else:
                started_at = self._clock.now()
                outcome = self._outcome(control, request, capture)
            reason = None if outcome.reason is None else masker.mask(outcome.reason)
            if reason is not None:
                capture.note(reason)
            if capture.log_error is not None:
                capture.note(f"the log file could not be written: {capture.log_error}")
        return ActionResult(
            status=outcome.status,
            reason=reason,
            exit_code=outcome.exit_code,
            output_tail=capture.tail(),
            log_path=request.log_path,
            started_at=started_at,
            finished_at=self._clock.now(),
        )

    def _outcome(
        self, control: RunControl, request: ActionRequest, capture: OutputCapture
    ) -> Outcome:
        action = request.action
        limit = None if request.timeout is None else request.timeout.total_seconds()
        if isinstance(action, CommandAction):
            return run_command(
                action, request.secrets, capture, control, timeout=limit, grace=self._kill_grace
            )
        # urllib pulls in http.client, email and ssl: ~8 MB an idle tray app has no use for.
        from domi_desktop.actions.http import run_http

        control.release_start_slot()  # a request's whole wait must not hold a start slot
        limit = action.timeout if limit is None else min(limit, action.timeout)
        return run_http(action, request.secrets, capture, control, timeout=limit)
