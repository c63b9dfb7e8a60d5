"""The running scheduler: the driver's fires claimed in the store and carried out by the runner.

Used by the headless daemon and by the tray app alike. Everything here runs on one loop thread;
the action runner's threads hand their results back through ``Loop.call_soon``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from domi_desktop.actions import (
    KILL_GRACE,
    ActionRequest,
    ActionResult,
    ActionRunner,
    RunningAction,
)
from domi_desktop.actions.leftovers import stop_leftovers
from domi_desktop.api.source import StoreSource
from domi_desktop.errors import DomiError
from domi_desktop.model import (
    Event,
    FireClaim,
    FireEvent,
    Overlap,
    Run,
    RunFinished,
    RunStatus,
    Schedule,
    SkipReason,
    Trigger,
    WakeReason,
)
from domi_desktop.ports import Clock, Loop, SecretStore
from domi_desktop.scheduler.decide import MAX_LISTED_SKIPS, FireDecision, WakePlan
from domi_desktop.scheduler.driver import Driver
from domi_desktop.store import Store, liveness

log = logging.getLogger(__name__)

REPLACED = "stopped: replaced by a newer run"
Listener = Callable[[Event], None]


@dataclass
class _Active:
    run_id: int
    schedule: Schedule
    trigger: Trigger
    attempt: int = 0
    handle: RunningAction | None = None
    started_at: datetime | None = None


@dataclass
class _Lane:
    """The runs of one concurrency key: those running and at most one waiting."""

    running: dict[int, _Active] = field(default_factory=dict)
    waiting: _Active | None = None


class Runtime:
    """Fires claimed atomically, actions started off the loop thread, events to listeners."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        loop: Loop,
        secrets: SecretStore,
        *,
        runner: ActionRunner | None = None,
        on_wake: Callable[[WakePlan, WakeReason], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.loop = loop
        self.secrets = secrets
        self.runner = runner or ActionRunner(clock)
        self.driver = Driver(clock, loop, StoreSource(store), self, on_wake=on_wake)
        self._lanes: dict[str, _Lane] = {}
        self._listeners: list[Listener] = []
        self.started_at: datetime | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> WakePlan:
        """Resume what a dead process left running, then the first wake (catch-up at start-up)."""
        self.started_at = self.clock.now()
        notes, unstopped = stop_orphaned_jobs(self.store)
        for orphan in self.store.interrupt_orphans(self.clock.now(), notes):
            # A second copy beside a job that would not die is what stopping it was to prevent.
            if orphan.id not in unstopped:
                self._resume(orphan)
        return self.driver.start()

    def stop(self, *, wait: float = 5.0) -> None:
        """Stop waking; running jobs are stopped and recorded ``interrupted`` (reason given)."""
        self.driver.stop()
        for lane in self._lanes.values():
            waiting, lane.waiting = lane.waiting, None
            if waiting is not None:
                self.store.finish_run(
                    waiting.run_id,
                    status=RunStatus.interrupted,
                    finished_at=self.clock.now(),
                    reason="stopped: domi-desktop quit before it started",
                )
        for running in self.runner.stop_all("stopped: domi-desktop quit"):
            result = running.wait(wait)
            if result is not None:
                self._finished(running.run_id, result)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def running_runs(self) -> list[int]:
        return sorted(run_id for lane in self._lanes.values() for run_id in lane.running)

    # -- the driver's sink ---------------------------------------------------------------------

    def fire(self, decision: FireDecision) -> bool:
        schedule = self.store.get_schedule(decision.schedule_id)
        lane = self._lanes.setdefault(_key(schedule), _Lane())
        reason: SkipReason | None = decision.skip_reason
        overlap = schedule.policies.overlap
        busy = bool(lane.running)
        if (reason is None and busy) and (
            overlap is Overlap.skip or (overlap is Overlap.queue and lane.waiting is not None)
        ):
            reason = SkipReason.busy
        skipped = decision.skipped()
        run_id = self.store.claim_fire(
            FireClaim(
                decision.schedule_id,
                expected_last_due=decision.expected_last_due,
                due=decision.due,
                fired_at=decision.fired_at,
                trigger=decision.trigger,
                late=decision.late,
                missed_count=decision.missed_count,
                skipped=skipped[-MAX_LISTED_SKIPS:],
                status=RunStatus.running if reason is None else RunStatus.skipped,
                reason=reason,
            )
        )
        if run_id is None:
            return False
        self._emit(
            FireEvent(
                schedule_id=decision.schedule_id,
                run_id=run_id,
                name=schedule.name,
                tz=schedule.tz,
                due=decision.due,
                fired_at=decision.fired_at,
                trigger=decision.trigger,
                late=decision.late,
                missed_count=decision.missed_count,
                skipped=reason,
            )
        )
        if reason is not None:
            return True
        active = _Active(run_id, schedule, decision.trigger)
        if busy and overlap is Overlap.queue:
            lane.waiting = active
        else:
            if busy and overlap is Overlap.replace:
                for other in lane.running.values():
                    if other.handle is not None:
                        other.handle.stop(REPLACED)
            self._launch(lane, active, delay=decision.delay)
        return True

    # -- manual runs and resumed ones ----------------------------------------------------------

    def run_now(self, schedule_id: int) -> int:
        """Start the schedule's action now (trigger ``manual``); ``last_due`` is untouched."""
        schedule = self.store.get_schedule(schedule_id)
        run_id = self.store.record_manual_run(schedule_id, self.clock.now(), Trigger.manual)
        self._emit_manual(schedule, run_id, Trigger.manual)
        self._launch(
            self._lanes.setdefault(_key(schedule), _Lane()),
            _Active(run_id, schedule, Trigger.manual),
        )
        return run_id

    def _resume(self, orphan: Run) -> None:
        try:
            schedule = self.store.get_schedule(orphan.schedule_id)
            run_id = self.store.record_manual_run(
                orphan.schedule_id, self.clock.now(), Trigger.resumed, resumed_from=orphan.id
            )
        except DomiError as error:
            log.warning("run %s was interrupted and cannot be resumed: %s", orphan.id, error)
            return
        log.info(
            "run %s was interrupted by a dead process; re-running it as run %s", orphan.id, run_id
        )
        self._emit_manual(schedule, run_id, Trigger.resumed)
        self._launch(
            self._lanes.setdefault(_key(schedule), _Lane()),
            _Active(run_id, schedule, Trigger.resumed),
        )

    def _emit_manual(self, schedule: Schedule, run_id: int, trigger: Trigger) -> None:
        self._emit(
            FireEvent(
                schedule_id=schedule.id,
                run_id=run_id,
                name=schedule.name,
                tz=schedule.tz,
                due=None,
                fired_at=self.clock.now(),
                trigger=trigger,
            )
        )

    # -- starting and finishing ----------------------------------------------------------------

    def _launch(self, lane: _Lane, active: _Active, *, delay: timedelta = timedelta(0)) -> None:
        lane.running[active.run_id] = active
        if delay > timedelta(0):
            self.loop.call_later(delay.total_seconds(), lambda: self._start(active))
        else:
            self._start(active)

    def _start(self, active: _Active) -> None:
        now = self.clock.now()
        log_path = self.store.log_path_for(active.run_id)
        if not self.store.start_run(active.run_id, now, log_path, attempt=active.attempt):
            self._release(active, None)
            return
        active.started_at = active.started_at or now
        request = ActionRequest(
            action=active.schedule.action,
            run_id=active.run_id,
            log_path=log_path,
            timeout=active.schedule.policies.timeout,
        )
        run_id = active.run_id
        active.handle = self.runner.start(
            request,
            lambda result: self.loop.call_soon(lambda: self._finished(run_id, result)),
            secrets=self.secrets,
            on_started=lambda pid: record_job(self.store, run_id, pid),
        )

    def _finished(self, run_id: int, result: ActionResult) -> None:
        active = next(
            (lane.running[run_id] for lane in self._lanes.values() if run_id in lane.running), None
        )
        if active is None:
            return  # already recorded (stop() waited for it)
        policies = active.schedule.policies
        failed = result.status in (RunStatus.failed, RunStatus.timed_out)
        if failed and active.attempt < policies.retries:
            backoff = policies.retry_backoff * (2**active.attempt)
            active.attempt += 1
            log.info(
                "run %s failed (%s); retry %s in %s", run_id, result.reason, active.attempt, backoff
            )
            self.loop.call_later(backoff.total_seconds(), lambda: self._start(active))
            return
        record_result(self.store, run_id, result)
        started = active.started_at or result.started_at
        self._emit(
            RunFinished(
                run_id=run_id,
                schedule_id=active.schedule.id,
                name=active.schedule.name,
                status=result.status,
                reason=result.reason,
                exit_code=result.exit_code,
                duration=result.finished_at - started,
            )
        )
        self._release(active, result)

    def _release(self, active: _Active, result: ActionResult | None) -> None:
        lane = self._lanes.get(_key(active.schedule))
        if lane is None:
            return
        lane.running.pop(active.run_id, None)
        if not lane.running and lane.waiting is not None:
            waiting, lane.waiting = lane.waiting, None
            self._launch(lane, waiting)

    def _emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken subscriber must not break the scheduler
                log.exception("event listener failed on %s", event.kind)


def record_result(store: Store, run_id: int, result: ActionResult) -> bool:
    return store.finish_run(
        run_id,
        status=result.status,
        finished_at=result.finished_at,
        exit_code=result.exit_code,
        reason=result.reason,
        output_tail=result.output_tail,
    )


def record_job(store: Store, run_id: int, pid: int) -> None:
    """Called on the run's thread, not the loop's: the pid must be on record before the job gets
    far, and the store serialises its callers."""
    store.record_job(run_id, pid, liveness.start_marker(pid))


def stop_orphaned_jobs(store: Store) -> tuple[dict[int, str], set[int]]:
    """Stop what is left of the jobs of runs whose process died, before anything re-runs them.

    Returns what to add to each run's reason, and the runs whose leftovers would not die.
    """
    notes: dict[int, str] = {}
    unstopped: set[int] = set()
    for run_id, job in store.orphaned_jobs().items():
        stopped = stop_leftovers(job, grace=KILL_GRACE)
        note = stopped.describe()
        if note is None:
            continue
        log.warning("run %s: its process died; %s", run_id, note)
        notes[run_id] = note
        if stopped.survivors:
            unstopped.add(run_id)
    return notes, unstopped


def run_here(store: Store, schedule_id: int, clock: Clock, secrets: SecretStore) -> Run:
    """A manual run in this process, waited for (the CLI's ``run-now`` when no app runs)."""
    schedule = store.get_schedule(schedule_id)
    run_id = store.record_manual_run(schedule.id, clock.now(), Trigger.manual)
    log_path = store.log_path_for(run_id)
    store.start_run(run_id, clock.now(), log_path)
    request = ActionRequest(schedule.action, run_id, log_path, schedule.policies.timeout)
    result = ActionRunner(clock).run(
        request, secrets=secrets, on_started=lambda pid: record_job(store, run_id, pid)
    )
    record_result(store, run_id, result)
    return store.get_run(run_id)


def _key(schedule: Schedule) -> str:
    return schedule.policies.concurrency_key or f"schedule:{schedule.id}"
