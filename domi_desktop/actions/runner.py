"""Start actions off the caller's thread; stop them; wait for them."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import overload

from domi_desktop.actions.capture import DEFAULT_LOG_LIMITS, LogLimits, OutputCapture
from domi_desktop.actions.command import CommandJob
from domi_desktop.actions.control import Outcome, RunControl
from domi_desktop.actions.identity import job_tags
from domi_desktop.actions.model import ActionRequest, ActionResult, check_action, resolve_secrets
from domi_desktop.actions.supervisor import supervisor
from domi_desktop.errors import ActionError, SecretError
from domi_desktop.model import NOT_STARTED_LATE, CommandAction, RunStatus
from domi_desktop.ports import Clock, SecretStore
from domi_desktop.secrets import Masker

log = logging.getLogger(__name__)

KILL_GRACE = 3.0
"""Seconds between asking a job's processes to stop (SIGTERM) and killing them (SIGKILL)."""

_NO_SECRETS = Masker(())
"""The masker of a run without secrets (most runs), made once."""

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

        Returns at once: the tree gets SIGTERM, then SIGKILL after the grace, from the job
        supervisor's thread; on Windows its Job Object is ended at once, there being no way to ask
        a windowless process (``tree.ProcessTree``). No effect on a run that has ended.
        """
        self._control.request_stop(reason)

    def pause(self, paused: bool) -> bool:
        """Pause the whole process tree where it is, or let it go on (``actions.pause``): its
        timeout counts only the time it runs. ``False`` when it cannot be (an HTTP request)."""
        return self._control.request_pause(paused)

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
    """Runs actions off the caller's thread.

    A command is started and looked after by the process's job supervisor (one thread for every
    job, ``supervisor.py``); an HTTP request, and a command whose secrets are still to be read
    from a store (an unlock prompt of the OS keyring may take a while), get a thread of their own
    first. ``on_finished`` is called on one of those threads and must not block: a Qt caller
    forwards it to the GUI thread (a queued signal). ``Clock`` gives the recorded start and finish
    times; timeouts use the monotonic clock.
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

    def start(
        self,
        request: ActionRequest,
        on_finished: OnFinished,
        *,
        secrets: SecretStore | None = None,
        on_started: OnStarted | None = None,
    ) -> RunningAction:
        """Start ``request`` and return at once.

        ``on_started(pid)`` is called as soon as a command's process runs (once per start, never
        for HTTP), on the supervisor's thread, and must not block: the caller records the pid, so
        that a later start of the app can stop what is left of the job if this process dies.

        With ``secrets``, the action's secrets are read from that store on a thread of the run's
        own (an unlock prompt of the OS keyring must not block the GUI or other jobs), and a
        secret that cannot be read ends the run ``failed`` with reason ``secret unavailable:
        ...``: this is how the app and the CLI start a schedule's action. Without it,
        ``request.secrets`` is used as it is.
        """
        if secrets is not None and request.secrets:
            raise ValueError("pass the secrets either resolved in the request or as a store")
        running = RunningAction(request.run_id, on_started)
        with self._lock:
            self._running.add(running)
        run = _Run(running, request, on_finished)
        action = request.action
        if isinstance(action, CommandAction) and not (secrets is not None and action.secret_env):
            supervisor().call_soon(lambda: self._begin(run, self._checked(request)))
            return running
        thread = threading.Thread(
            target=self._work,
            args=(run, secrets),
            name=f"domi-run-{request.run_id}",
            daemon=True,  # quitting the app must not wait for a job; it stops them first
        )
        _start_soon(thread)
        return running

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

    @staticmethod
    def _checked(request: ActionRequest, store: SecretStore | None = None) -> _Checked:
        try:
            check_action(request.action)
            if store is not None:
                request = dataclasses.replace(
                    request, secrets=resolve_secrets(request.action, store)
                )
        except ActionError as error:
            return _Checked(request, f"invalid action: {error}")
        except SecretError as error:
            return _Checked(request, f"secret unavailable: {error}")
        return _Checked(request, None)

    def _work(self, run: _Run, store: SecretStore | None) -> None:
        """A run's own thread: its secrets read, then a command goes to the supervisor and an
        HTTP request is made here."""
        try:
            checked = self._checked(run.request, store)
            if isinstance(checked.request.action, CommandAction):
                supervisor().call_soon(lambda: self._begin(run, checked))
                return
            if self._open(run, checked):
                self._conclude(run, self._http(run, checked.request))
        # A bug must still end the run, or it would show as running forever.
        except Exception as error:
            self._failed(run, error)

    def _begin(self, run: _Run, checked: _Checked) -> None:
        """On the supervisor's thread: the log opened, the command started."""
        try:
            if not self._open(run, checked):
                return
            request = checked.request
            action = request.action
            assert isinstance(action, CommandAction)
            run.started_at = self._clock.now()
            CommandJob(
                supervisor(),
                action,
                request.secrets,
                run.capture,
                run.running._control,
                timeout=None if request.timeout is None else request.timeout.total_seconds(),
                grace=self._kill_grace,
                on_end=lambda outcome: self._ended(run, outcome),
                tags=job_tags(request.run_id),
                background=request.background,
            ).start()
        except Exception as error:
            self._failed(run, error)

    def _open(self, run: _Run, checked: _Checked) -> bool:
        """Ready the run's log; False when the run has ended already (it was handed over too
        late, the request was refused, or a stop came first)."""
        request = checked.request
        run.masker = Masker(request.secrets.values()) if request.secrets else _NO_SECRETS
        run.started_at = self._clock.now()
        if request.start_by is not None and run.started_at > request.start_by:
            # Before the log: the run's next start writes there.
            self._finish(
                run,
                ActionResult(
                    RunStatus.interrupted, NOT_STARTED_LATE, None, "", request.log_path,
                    run.started_at, run.started_at, too_late=True,
                ),
            )  # fmt: skip
            return False
        run.capture = OutputCapture(request.log_path, run.masker, self._log_limits)
        stop_reason = run.running._control.stop_reason
        if checked.failure is not None:
            self._conclude(run, Outcome(RunStatus.failed, checked.failure))
        elif stop_reason is not None:
            self._conclude(run, Outcome(RunStatus.interrupted, stop_reason))
        else:
            return True
        return False

    def _http(self, run: _Run, request: ActionRequest) -> Outcome:
        # urllib pulls in http.client, email and ssl: ~8 MB an idle tray app has no use for.
        from domi_desktop.actions.http import run_http

        action = request.action
        assert not isinstance(action, CommandAction)
        limit = action.timeout
        if request.timeout is not None:
            limit = min(limit, request.timeout.total_seconds())
        run.started_at = self._clock.now()
        return run_http(action, request.secrets, run.capture, run.running._control, timeout=limit)

    def _ended(self, run: _Run, outcome: Outcome) -> None:
        """A command's end, on the supervisor's thread: its result now, told at the end of the
        supervisor's turn with those of the jobs that ended in it (``Supervisor.report``)."""
        result = self._result(run, outcome)
        supervisor().report(lambda: self._finish(run, result))

    def _conclude(self, run: _Run, outcome: Outcome) -> None:
        self._finish(run, self._result(run, outcome))

    def _result(self, run: _Run, outcome: Outcome) -> ActionResult:
        """The run's result from how its action ended: the reason noted in the log, masked."""
        capture = run.capture
        reason = None if outcome.reason is None else run.masker.mask(outcome.reason)
        with capture:
            if reason is not None:
                capture.note(reason)
            if capture.log_error is not None:
                capture.note(f"the log file could not be written: {capture.log_error}")
        return ActionResult(
            status=outcome.status,
            reason=reason,
            exit_code=outcome.exit_code,
            output_tail=capture.tail(),
            log_path=run.request.log_path,
            started_at=run.started_at,
            finished_at=self._clock.now(),
        )

    def _failed(self, run: _Run, error: Exception) -> None:
        log.exception("run %s: the action runner failed", run.request.run_id)
        # The log is a bare descriptor: nothing else would ever close it.
        with contextlib.suppress(AttributeError):  # it was not opened
            run.capture.close()
        now = self._clock.now()
        reason = f"internal error: {type(error).__name__}: {error}"
        self._finish(
            run, ActionResult(RunStatus.failed, reason, None, "", run.request.log_path, now, now)
        )

    def _finish(self, run: _Run, result: ActionResult) -> None:
        running = run.running
        if running._done.is_set():
            return
        running._result = result
        try:
            run.on_finished(result)
        except Exception:
            log.exception("run %s: on_finished failed", run.request.run_id)
        finally:
            with self._lock:
                self._running.discard(running)
            running._done.set()


_to_start: queue.SimpleQueue[threading.Thread] = queue.SimpleQueue()
_starter_lock = threading.Lock()
_starter: threading.Thread | None = None


def _start_soon(thread: threading.Thread) -> None:
    """``thread.start()`` on the process's starter thread: it waits until the new thread has
    run, which takes the GIL from every busy thread in turn, and the caller is the GUI."""
    global _starter
    with _starter_lock:
        if _starter is None:
            _starter = threading.Thread(target=_start_each, name="domi-run-starter", daemon=True)
            _starter.start()
    _to_start.put(thread)


def _start_each() -> None:
    while True:
        _to_start.get().start()


@dataclass(frozen=True, slots=True)
class _Checked:
    request: ActionRequest
    failure: str | None
    """Why the run fails before it starts (an invalid action, a secret not read), or None."""


@dataclass(slots=True, eq=False)
class _Run:
    """One run between ``start`` and its result, on whichever thread looks after it."""

    running: RunningAction
    request: ActionRequest
    on_finished: OnFinished
    masker: Masker = dataclasses.field(init=False)
    capture: OutputCapture = dataclasses.field(init=False)
    started_at: datetime = dataclasses.field(init=False)
