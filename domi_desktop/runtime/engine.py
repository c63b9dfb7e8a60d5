"""The running scheduler: the driver's fires claimed in the store and carried out by the runner.

Used by the headless daemon and by the tray app alike. Everything here runs on one loop thread;
the action runner's threads hand their results back through ``Loop.call_soon``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from domi_desktop.actions import (
    ActionRequest,
    ActionResult,
    ActionRunner,
    warden,
)
from domi_desktop.events import Event, RunFinished, RunWaiting, WakeDecided
from domi_desktop.model import (
    Alerts,
    FireOutcome,
    Run,
    RunStatus,
    Schedule,
    Trigger,
    WakeReason,
)
from domi_desktop.ports import Clock, ConditionSource, Loop, SecretStore, SleepInhibitor
from domi_desktop.runtime.alerts import AlertKeeper
from domi_desktop.runtime.bursts import CatchUpBurst
from domi_desktop.runtime.catchup import (
    FutureLanes,
    Pending,
    Pruner,
    Results,
    WakeWrite,
    decided_late,
    fire_event,
    for_each,
    plan_claims,
    write_wake,
)
from domi_desktop.runtime.changes import ChangeFeed
from domi_desktop.runtime.gates import ConditionKeeper
from domi_desktop.runtime.jobs import settle_orphans
from domi_desktop.runtime.lanes import Active, Admission, Lane, Lanes, lane_key
from domi_desktop.runtime.leases import LeaseKeeper
from domi_desktop.runtime.manual import ManualRuns
from domi_desktop.runtime.placement import PlacedSource
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.scheduler.decide import FireDecision, WakePlan
from domi_desktop.scheduler.driver import Driver
from domi_desktop.store import Store
from domi_desktop.store.claims import Finish, Start
from domi_desktop.store.writer import Writer

log = logging.getLogger(__name__)

UNLIMITED = 1 << 31
PLAN_FAILED = "the fires of this wake could not be planned (see the log)"
Listener = Callable[[Event], None]


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
        recorder: Recorder | None = None,
        conditions: ConditionSource | None = None,
        inhibitor: SleepInhibitor | None = None,
        alerts: Alerts = Alerts(),
        burst: int | None = None,
    ) -> None:
        """``recorder`` writes the claims, starts and results (by default on the loop thread, at
        once); ``conditions``
        and ``inhibitor`` are the OS's (none: every run starts, sleep is not held off);
        ``alerts`` the defaults of a schedule without its own; ``burst`` the catch-up limit
        (the app's setting; ``None``: no limit)."""
        self.store = store
        self.clock = clock
        self.loop = loop
        self.secrets = secrets
        self.runner = runner or ActionRunner(clock)
        self.recorder = recorder or Recorder(store, loop, threaded=False)
        self.changes = ChangeFeed()
        """Every "a schedule changed": the app's edits (``schedule_changed``) and re-reads."""
        self._source = PlacedSource(store, secrets, self.changes)
        self.alerts = AlertKeeper(self, alerts)
        self.keeper = ConditionKeeper(
            self,
            conditions,
            inhibitor,
            alerts=self.alerts,
            on_wake=on_wake,
        )
        self.bursts = CatchUpBurst(burst or UNLIMITED, self._emit)
        self.driver = Driver(clock, loop, self._source, self, on_wake=self.keeper.woke)
        self.driver.held_until = self.keeper.held_until
        self.lanes = Lanes()
        self._manual = ManualRuns(self)
        self._listeners: list[Listener] = []
        self._results = Results(
            self.recorder, store, self._emit, self.alerts.read_alert_states,
            rerun=self._manual.resume,
        )  # fmt: skip
        self.recorder.on_trouble = self._results.trouble
        self.leases = LeaseKeeper(
            store,
            clock,
            loop,
            running=self.running_runs,
            stop=self.stop_run,
            resume=self._resume,
            placed_here=self._source.placed_here,
        )
        self._pruner = Pruner(store, clock, self.recorder)
        self.started_at: datetime | None = None
        self._bursting: dict[int, tuple[Active, Pending]] = {}

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> WakePlan:
        """Resume what a dead process left running, then the first wake (catch-up at start-up)."""
        self.started_at = self.clock.now()
        self.keeper.load(self.store.waiting_runs())
        settle_orphans(self.store, self.clock, self.loop, self._resume)
        plan = self.driver.start()
        self.leases.start()
        # Runs of machines that vanished while this one was off; after the first read of the
        # schedules, which says which of them this machine may run.
        self.leases.tick()
        return plan

    def stop(self, *, wait: float = 5.0) -> None:
        """Stop waking; running jobs are stopped and recorded ``interrupted`` (reason given)."""
        self.driver.stop()
        self.leases.stop()
        parked = [active for active, _ in self._bursting.values()]
        self._bursting.clear()  # a catch-up not admitted yet never starts now
        self._results.stopping = True
        why = "stopped: domi-desktop quit before it started"
        for unstarted in self.lanes.take_unstarted(parked):
            finish = Finish(unstarted.run_id, RunStatus.interrupted, self.clock.now(), None, why)
            self._results.add(finish, None)
        for running in self.runner.stop_all("stopped: domi-desktop quit"):
            result = running.wait(wait)
            if result is not None:
                self.finished(running.run_id, result)
        # A wake's claims the recorder committed as the app quit were never handed to a lane.
        known = self.lanes.run_ids()
        self.recorder.submit(partial(Writer.abandon, keep=known, now=self.clock.now(), reason=why))
        self.keeper.close()
        self.recorder.close()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def schedule_changed(self, schedule_id: int | None) -> None:
        """The app changed a schedule (an edit, a delete, alerts pausing it; None: several, an
        import): planned again, and every reader of ``changes`` told."""
        self.driver.reload(schedule_id)
        self.changes.publish(schedule_id)

    # -- this machine's share of a shared store (runtime/placement.py) ------------------------

    def link_lost(self, problem: str | None) -> None:
        """The shared store is unreachable (``problem``) or back (None): no claim meanwhile."""
        self._source.link_lost(problem)

    @property
    def store_problem(self) -> str | None:
        """Why the recorder's writes are held up (a full disk, a lock), while they are."""
        return self._results.troubled

    @property
    def link_problem(self) -> str | None:
        return self._source.link_problem

    def not_here(self) -> dict[int, str]:
        """Schedule id -> why this machine does not claim it."""
        return dict(self._source.not_here)

    def running_runs(self) -> list[int]:
        return sorted(self.lanes.run_ids())

    def running_by_schedule(self) -> dict[int, list[int]]:
        """Schedule id -> the ids of its runs in progress (started or about to start)."""
        return self.lanes.by_schedule()

    def stop_run(self, run_id: int, reason: str = "stopped by the user") -> bool:
        """Stop a run in progress; False when it is not running here (``ManualRuns.stop``)."""
        return self._manual.stop(run_id, reason)

    def pause_run(self, run_id: int, paused: bool) -> bool:
        """Pause a job's whole tree where it is, or let it go on; False when it cannot be."""
        active = self.lanes.holding(run_id)
        return active is not None and active.handle is not None and active.handle.pause(paused)

    # -- the driver's sink ---------------------------------------------------------------------

    def fire_all(
        self,
        decisions: Sequence[FireDecision],
        done: Callable[[Sequence[FireOutcome]], None],
        reason: WakeReason,
    ) -> None:
        """A wake's fires: decided here (busy or not) and said (``WakeDecided``), claimed by the
        recorder in one transaction (their runs started in the next), then registered,
        announced and launched here."""
        unavailable = self._source.unavailable()
        if unavailable is not None:
            done([FireOutcome(d.schedule_id, False, error=unavailable) for d in decisions])
            return
        schedule_of = self._source.schedule
        self.keeper.watch_for([schedule_of(d.schedule_id) for d in decisions])
        try:
            pending = self.keeper.apply_gates(
                plan_claims(decisions, schedule_of, FutureLanes(self.lanes), lane_key)
            )
        except Exception:
            log.exception("the fires of this wake could not be planned")
            done([FireOutcome(d.schedule_id, False, error=PLAN_FAILED) for d in decisions])
            return
        if self.driver.running:
            self._claim(pending, done, reason)

    def _claim(
        self,
        pending: list[Pending],
        done: Callable[[Sequence[FireOutcome]], None],
        reason: WakeReason,
    ) -> None:
        pending = self.bursts.hold_back(pending)
        late, burst = decided_late(pending), self.bursts.event_of(pending)
        if late or burst is not None:
            self._emit(WakeDecided(reason, late, burst))
        reserved = [
            (self.lanes.reserve(each.schedule), lane_key(each.schedule))
            for each in pending
            if each.reason is None and each.hold is None and not each.queued
        ]

        def written(outcome: WakeWrite | Exception) -> None:
            for lane, key in reserved:
                self.lanes.recorded(lane, key)
            self._claimed(pending, outcome, done)

        self.recorder.submit(partial(write_wake, pending, self.clock, self.store), written)

    def _claimed(
        self,
        pending: Sequence[Pending],
        outcome: WakeWrite | Exception,
        done: Callable[[Sequence[FireOutcome]], None],
    ) -> None:
        if isinstance(outcome, Exception):
            log.error("the fires of this wake could not be recorded: %s", outcome)
            self._results.problem(outcome)
            done([FireOutcome(p.decision.schedule_id, False, error=str(outcome)) for p in pending])
            return
        log.info(
            "claimed %s fire(s): wrote %s rows in %.3f s",
            sum(run_id is not None for run_id in outcome.run_ids),
            outcome.rows,
            outcome.seconds,
        )
        outcomes: list[FireOutcome] = []
        launches: list[tuple[Active, Pending]] = []
        catch_ups: list[tuple[Active, Pending]] = []

        def claimed(item: tuple[Pending, int | None]) -> None:
            each, run_id = item
            decision, schedule = each.decision, each.schedule
            if run_id is None:
                outcomes.append(FireOutcome(decision.schedule_id, False))
                return
            if self._source.known.get(schedule.id) is schedule:
                moved = replace(schedule, last_due=decision.due)
                self._source.known[schedule.id] = moved
                outcomes.append(FireOutcome(schedule.id, True, moved))
            else:  # edited while its claim was being written: the driver re-reads it
                outcomes.append(FireOutcome(schedule.id, True))
            if each.hold is not None:
                self.keeper.hold(run_id, each)
                self._emit(RunWaiting(run_id, schedule.id, schedule.name, decision.due, each.hold))
                return
            active = None
            if each.reason is None:
                active = Active(run_id, schedule, decision.trigger)
                self._register(active, each.queued)
                if each.note is not None:
                    self.keeper.noted(run_id, each.note)
            self._emit(fire_event(decision, schedule, run_id, each.reason))
            if active is not None and not each.queued:
                burst = decision.trigger is Trigger.catch_up
                (catch_ups if burst else launches).append((active, each))

        def announced() -> None:
            launches.extend(self.bursts.admit(catch_ups, self._bursting))
            done(outcomes)
            # Asked at each launch: the app may freeze between two of them.
            lease = self.store.holder.lease
            for_each(
                launches,
                lambda item: self._begin(
                    *item, outcome.leased_at(item[0].run_id, self.clock.now(), lease)
                ),
            )
            self._pruner.maybe()

        for_each(list(zip(outcome.pending, outcome.run_ids, strict=True)), claimed)
        announced()

    def _register(self, active: Active, queued: bool) -> None:
        lane = self.lanes.setdefault(lane_key(active.schedule), Lane())
        if queued:
            lane.waiting = active
            return
        self.lanes.start(lane, active, replacing=True)

    def _begin(self, active: Active, pending: Pending, leased_at: datetime | None) -> None:
        """Launch a claimed fire; ``leased_at``: when its start was written with the claim, if
        that start still holds (``WakeWrite.leased_at``), else it is written now."""
        lane = self.lanes.get(lane_key(active.schedule))
        if lane is None or active.run_id not in lane.running:
            return  # stopped meanwhile
        if leased_at is not None:
            active.started_at = self.clock.now()
            self.run_action(active, self.store.log_path_for(active.run_id), leased_at)
        elif pending.decision.delay > timedelta(0):
            self.loop.call_later(
                pending.decision.delay.total_seconds(), lambda: self._start(active)
            )
        else:
            self._start(active)

    # -- manual runs and resumed ones ----------------------------------------------------------

    def run_now(
        self, schedule_id: int, done: Callable[[int | Exception], None] | None = None
    ) -> None:
        """Start the schedule's action now (trigger ``manual``); ``last_due`` is untouched.
        ``done`` gets the new run's id once it is on record (or why it could not be)."""
        self._manual.run(schedule_id, Trigger.manual, None, done)

    def _resume(self, orphan: Run) -> None:
        self._manual.resume(orphan.schedule_id, orphan.id)

    # -- starting and finishing ----------------------------------------------------------------

    def _launch(self, lane: Lane, active: Active) -> None:
        self.lanes.run(lane, active)
        self._start(active)

    def _start(self, active: Active) -> None:
        now = self.clock.now()
        log_path = self.store.log_path_for(active.run_id)
        start = Start(active.run_id, now, str(log_path), active.attempt)

        def started(outcome: list[bool] | Exception) -> None:
            if isinstance(outcome, Exception) or not outcome[0]:
                if isinstance(outcome, Exception):
                    log.error("run %s could not be started: %s", active.run_id, outcome)
                self._release(active, None)
                return
            active.started_at = active.started_at or now
            self.run_action(active, log_path, now)

        self.recorder.submit(lambda writer: writer.start([start]), started)

    def run_action(self, active: Active, log_path: Path, leased_at: datetime) -> None:
        """Hand the run to the runner; ``leased_at``: when its start (and lease) was written.
        On a shared store the runner will not start it once most of that lease has gone by: an
        app frozen between here and the start may have lost the run to another machine."""
        self.keeper.started(active.run_id, active.schedule)
        lease = self.store.holder.lease
        request = ActionRequest(
            action=self.keeper.action_for(active.schedule),
            run_id=active.run_id,
            log_path=log_path,
            timeout=active.schedule.policies.timeout,
            start_by=warden.trusted_until(leased_at, lease) if self.store.shared else None,
            background=active.schedule.policies.background,
        )
        run_id = active.run_id
        active.handle = self.runner.start(
            request,
            lambda result: self.loop.call_soon(lambda: self.finished(run_id, result)),
            secrets=self.secrets,
            on_started=lambda pid: self.recorder.record_job(run_id, pid),
        )

    def finished(self, run_id: int, result: ActionResult) -> None:
        active = self.lanes.active(run_id)
        if active is None:
            return  # already recorded (stop() waited for it)
        if result.too_late:
            self._start(active)  # a fresh lease, unless another machine took the run meanwhile
            return
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
        started = active.started_at or result.started_at
        reason = self.keeper.reason(run_id, result.reason)
        # The job has ended: its lane is free now, whether or not its result can be written yet
        # ("busy" means a live job, never a full disk).
        self._release(active, result)
        self._results.add(
            Finish(
                run_id, result.status, result.finished_at, result.exit_code, reason,
                result.output_tail,
            ),
            RunFinished(
                run_id=run_id,
                schedule_id=active.schedule.id,
                name=active.schedule.name,
                status=result.status,
                reason=reason,
                exit_code=result.exit_code,
                duration=result.finished_at - started,
            ),
        )  # fmt: skip

    def _release(self, active: Active, result: ActionResult | None) -> None:
        key = lane_key(active.schedule)
        lane = self.lanes.get(key)
        if lane is None:
            return
        self.lanes.end(lane, active.run_id)
        self.keeper.ended(active.run_id)
        for run_id in self.bursts.ended(active.run_id):
            if run_id in self._bursting:
                self._begin(*self._bursting.pop(run_id), None)
        if not lane.busy and lane.waiting is not None:
            waiting, lane.waiting = lane.waiting, None
            self._launch(lane, waiting)
        elif not lane.busy and self.lanes.get(key) is lane:
            del self.lanes[key]  # ``Lanes``: an idle lane goes

    def _emit(self, event: Event) -> None:
        alerts = self.alerts.observe(event)
        if isinstance(event, RunFinished):
            event = replace(event, alerted=bool(alerts))
        for each in [event, *alerts]:
            for listener in list(self._listeners):
                try:
                    listener(each)
                except Exception:  # a broken subscriber must not break the scheduler
                    log.exception("event listener failed on %s", each.kind)

    # -- for the conditions' keeper ------------------------------------------------------------

    emit = _emit

    def known_schedules(self) -> dict[int, Schedule]:
        return self._source.known

    def lane_free(self, schedule: Schedule) -> bool:
        # A run that waited for its conditions waits on for a busy lane: it stops nothing.
        admitted = self.lanes.admit(schedule, may_queue=False, may_replace=False)
        return admitted is Admission.start

    def launch_held(
        self, run_id: int, schedule: Schedule, trigger: Trigger, now: datetime, log_path: Path
    ) -> None:
        """A waiting run whose row has just turned ``running``: its action starts."""
        active = Active(run_id, schedule, trigger, started_at=now)
        self.lanes.start(self.lanes.setdefault(lane_key(schedule), Lane()), active, replacing=False)
        self.run_action(active, log_path, now)
