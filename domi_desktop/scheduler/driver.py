"""The driver: wakes, asks the planner, hands fires to a sink, re-arms one short timer.

It re-plans from the wall clock on every wake source (its timer, resume from sleep, a clock jump,
a time-zone change, an edit, start-up) and never trusts a long timer: timers run on a monotonic
clock that stops while the machine sleeps.

At every wake it also asks the source whether another process changed the store (the CLI writes
the database directly when it cannot reach the app) and then re-reads every schedule.

The clock set back: a schedule whose ``last_due`` is later than the wall clock would
fire nothing until the clock caught up (a jump of +3 days and back froze it for 3 days). So its
``last_due`` is set back to now and it is planned from the expression again, but **a due that was
already decided (run or recorded skipped) is never decided again**: the store keeps those run rows,
and a due among them only moves ``last_due`` past it. So after +3 days and back, the dues in
between run as the clock reaches them (they never ran), while a real clock set back a day re-lives
yesterday's 09:00 without running it twice. Dues missed between two already-decided ones are
passed over silently: rather run too few than too many.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from domi_desktop.model import FireOutcome, Schedule, WakeReason
from domi_desktop.ports import Clock, ScheduleSource, Timer, TimerHandle
from domi_desktop.scheduler.decide import FireDecision, Planner, WakePlan, decide

log = logging.getLogger(__name__)

_TICK = timedelta(microseconds=1)


class FireSink(Protocol):
    """Where the driver hands a wake's fires: the runtime claims them in the store and starts them."""

    def fire_all(
        self,
        decisions: Sequence[FireDecision],
        done: Callable[[Sequence[FireOutcome]], None],
        reason: WakeReason,
    ) -> None:
        """Claim and start all the fires of one wake (``reason``'s; the claims maybe on another
        thread); call ``done`` on the loop thread, exactly once, with one outcome per decision,
        in order."""
        ...


@dataclass(frozen=True, slots=True)
class WakeRecord:
    at: datetime
    reason: WakeReason


class JumpDetector:
    """Tells a wall-clock jump (or a sleep: the monotonic clock stops meanwhile) from time passing.

    Portable: it only compares how far the wall clock and the monotonic clock moved.
    """

    def __init__(self, tolerance: timedelta = timedelta(seconds=5)) -> None:
        self._tolerance = tolerance.total_seconds()
        self._last: tuple[datetime, float] | None = None

    def observe(self, wall: datetime, monotonic: float) -> bool:
        """Record a reading; True when the wall clock moved differently from the monotonic one."""
        last, self._last = self._last, (wall, monotonic)
        if last is None:
            return False
        wall_moved = (wall - last[0]).total_seconds()
        mono_moved = monotonic - last[1]
        return abs(wall_moved - mono_moved) > self._tolerance


class Driver:
    def __init__(
        self,
        clock: Clock,
        timer: Timer,
        source: ScheduleSource,
        sink: FireSink,
        *,
        on_wake: Callable[[WakePlan, WakeReason], None] | None = None,
    ) -> None:
        self._clock = clock
        self._timer = timer
        self._source = source
        self._sink = sink
        self._on_wake = on_wake
        self._planner = Planner()
        self._handle: TimerHandle | None = None
        self._jumps = JumpDetector()
        self.paused = False
        self.last_wake: WakeRecord | None = None
        self.next_wake: datetime | None = None
        self.running = False
        self._in_flight = False
        """A wake's fires are being claimed; a wake meanwhile waits (``_again``) until they are."""
        self._again: WakeReason | None = None
        self._decided: dict[int, frozenset[datetime]] = {}
        self.held_until: Callable[[datetime], datetime | None] | None = None
        """When runs wait for their conditions: the latest instant of the next wake after ``now``
        (the runtime's; ``None`` when nothing waits)."""

    def start(self) -> WakePlan:
        self._load()
        self._decided = self._source.decided_ahead()
        self.running = True
        return self.wake(WakeReason.start)

    def stop(self) -> None:
        self.running = False
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None

    def reload(self, schedule_id: int | None = None) -> WakePlan | None:
        """A schedule was created, edited, enabled, disabled or deleted: re-read it and re-plan."""
        if schedule_id is None:
            self._load()
        else:
            self._refresh(schedule_id)
        return self.wake(WakeReason.edit) if self.running else None

    def set_paused(self, paused: bool) -> None:
        """Pause or resume every schedule; planned again at once."""
        self.paused = paused
        self.wake(WakeReason.edit)

    def next_fire(self, schedule_id: int) -> datetime | None:
        return self._planner.next_fire(schedule_id)

    def soonest(self) -> tuple[datetime, Schedule] | None:
        return self._planner.soonest()

    def next_fires(self) -> dict[int, float]:
        return self._planner.next_fires()

    @property
    def waking(self) -> bool:
        """A wake's fires are being claimed (the recorder writes them on its own thread)."""
        return self._in_flight

    def soonest_n(self, count: int) -> list[tuple[datetime, Schedule]]:
        return self._planner.soonest_n(count)

    def wake(self, reason: WakeReason) -> WakePlan:
        if reason is WakeReason.tz_change:
            self._planner.zone_changed()
        now = self._clock.now()
        self._jumps.observe(now, self._clock.monotonic())
        if self._in_flight:
            # The previous wake is still being decided or claimed: plan again once it is.
            self._again = reason
            return self._meanwhile(now)
        errors: list[tuple[int, str]] = []  # besides the planner's own
        try:
            if self._source.changed():
                log.info("the schedules were changed by another process: re-reading them")
                self._load()
        except Exception as error:  # the timer below must be re-armed whatever happens
            log.exception("the schedules could not be re-read")
            errors.append((0, f"re-read failed: {error}"))
        self._plan_ahead_from(now, errors)
        return self._after_deciding(self._planner.plan(now, paused=self.paused), reason, errors)

    def _meanwhile(self, now: datetime) -> WakePlan:
        """What a wake says while the one before it is still being claimed."""
        soonest = self._planner.soonest()
        upcoming = None if soonest is None else soonest[0]
        return WakePlan(now, (), upcoming, self.next_wake or now)

    def _after_deciding(
        self, plan: WakePlan, reason: WakeReason, errors: list[tuple[int, str]]
    ) -> WakePlan:
        """The rest of a wake, its fires decided: the hand-over of those still owed."""
        now = plan.now
        fires: list[FireDecision] = []
        for planned in plan.fires:
            try:
                decision = self._pass_decided(planned, now)
            except Exception as error:
                log.exception("schedule %s could not be passed over", planned.schedule_id)
                errors.append((planned.schedule_id, f"fire failed: {error}"))
                decision = None
            if decision is None:
                self._refresh_or_fail(planned.schedule_id, errors)
            else:
                fires.append(decision)
        if errors or len(fires) != len(plan.fires):
            after = self._planner.plan(now, paused=self.paused) if not fires else plan
            plan = replace(
                plan,
                fires=tuple(fires),
                next_fire=after.next_fire,
                next_wake=after.next_wake,
                errors=tuple(sorted({**dict(plan.errors), **dict(errors)}.items())),
            )
        self.last_wake = WakeRecord(now, reason)
        if not plan.fires:
            self._wake_done(plan, reason)
            self._wake_again()
            return plan
        self._in_flight = True
        finished: list[WakePlan] = []
        self._hand_over(
            plan.fires,
            lambda outcomes: finished.append(self._fired(plan, reason, outcomes)),
            reason,
        )
        # A sink that claims on the spot has finished by now; one that claims on a worker
        # finishes later, and the final plan goes to ``on_wake`` then.
        return finished[0] if finished else plan

    # -- the hand-off of a wake's fires to the sink (claims may be written on another thread) --

    def _hand_over(
        self,
        fires: Sequence[FireDecision],
        done: Callable[[Sequence[FireOutcome]], None],
        reason: WakeReason,
    ) -> None:
        answered = False

        def once(outcomes: Sequence[FireOutcome]) -> None:
            nonlocal answered
            answered = True
            done(outcomes)

        try:
            self._sink.fire_all(fires, once, reason)
        except Exception as error:
            log.exception("the fires of a wake failed")
            if not answered:
                once([FireOutcome(d.schedule_id, False, error=str(error)) for d in fires])

    def _fired(
        self, plan: WakePlan, reason: WakeReason, outcomes: Sequence[FireOutcome]
    ) -> WakePlan:
        errors = list(plan.errors)
        for fire, outcome in zip(plan.fires, outcomes, strict=True):
            if outcome.error is not None:
                errors.append((outcome.schedule_id, f"fire failed: {outcome.error}"))
            if outcome.schedule is not None:
                self._planner.upsert(outcome.schedule, fire)
                continue
            # Lost or failed, the stored last_due is the truth: re-read it.
            self._refresh_or_fail(outcome.schedule_id, errors)
        after = self._planner.plan(plan.now, paused=self.paused)
        plan = replace(
            plan, next_fire=after.next_fire, next_wake=after.next_wake, errors=tuple(errors)
        )
        self._in_flight = False
        self._wake_done(plan, reason)
        self._wake_again()
        return plan

    def _wake_again(self) -> None:
        """A wake that came while the last one was decided or claimed."""
        again, self._again = self._again, None
        if again is not None:
            self.wake(again)

    def _wake_done(self, plan: WakePlan, reason: WakeReason) -> None:
        held = None if self.held_until is None else self.held_until(plan.now)
        if held is not None and held < plan.next_wake:
            plan = replace(plan, next_wake=max(held, plan.now))
        self._arm(plan)
        if self._on_wake is not None:
            self._on_wake(plan, reason)

    def _load(self) -> None:
        schedules, broken = self._source.load()
        self._planner = Planner(schedules)
        for schedule_id, reason in broken.items():
            self._planner.fail(schedule_id, reason)

    def _plan_ahead_from(self, now: datetime, errors: list[tuple[int, str]]) -> None:
        """Set back the ``last_due`` of schedules that are ahead of the clock (module docstring)."""
        ahead = self._planner.ahead(now)
        for schedule in ahead:
            log.warning(
                "schedule %s: its last due %s is later than the clock (%s), which went back: "
                "planning it from now; dues already decided will not run again",
                schedule.id,
                schedule.last_due.isoformat() if schedule.last_due else None,
                now.isoformat(),
            )
            try:
                # Just before now: a due at this very instant is owed now.
                self._source.rebase(schedule.id, schedule.last_due, now - _TICK)
            except Exception as error:
                log.exception("schedule %s could not be set back", schedule.id)
                errors.append((schedule.id, f"set back failed: {error}"))
            self._refresh_or_fail(schedule.id, errors)
        if ahead:
            self._decided = self._source.decided_ahead()

    def _pass_decided(self, decision: FireDecision, now: datetime) -> FireDecision | None:
        """``decision`` without the dues already decided before the clock went back: ``last_due``
        moves past the latest of them; None when the due itself was one."""
        done = self._decided.get(decision.schedule_id)
        if not done:
            return decision
        since = decision.expected_last_due
        passed = [due for due in done if (since is None or due > since) and due <= decision.due]
        if not passed:
            return decision
        latest = max(passed)
        rest = frozenset(due for due in done if due > latest)
        if rest:
            self._decided[decision.schedule_id] = rest
        else:
            del self._decided[decision.schedule_id]
        log.info(
            "schedule %s: due %s was decided before the clock went back; not run again",
            decision.schedule_id,
            latest.isoformat(),
        )
        if not self._source.rebase(decision.schedule_id, since, latest):
            return None  # moved on meanwhile (an edit): the refresh after this re-reads it
        if latest == decision.due:
            return None
        schedule = self._source.get(decision.schedule_id)
        return None if schedule is None else decide(schedule, now, paused=self.paused)

    def _refresh_or_fail(self, schedule_id: int, errors: list[tuple[int, str]]) -> None:
        try:
            self._refresh(schedule_id)
        except Exception as error:  # the timer must be re-armed whatever happens
            log.exception("schedule %s could not be re-read", schedule_id)
            self._planner.fail(schedule_id, f"cannot be read: {error}")
            errors.append((schedule_id, f"re-read failed: {error}"))

    def _refresh(self, schedule_id: int) -> None:
        schedule = self._source.get(schedule_id)
        if schedule is None:
            self._planner.remove(schedule_id)
        else:
            self._planner.upsert(schedule)

    def _arm(self, plan: WakePlan) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if not self.running:
            self.next_wake = None
            return
        self.next_wake = plan.next_wake
        # From the clock, not the plan's moment: a wake whose claims took long to write (the
        # write lock held by another program) may end after its next wake was due.
        delay = max(0.0, (plan.next_wake - self._clock.now()).total_seconds())
        self._handle = self._timer.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._handle = None
        if not self.running:
            return
        jumped = self._jumps.observe(self._clock.now(), self._clock.monotonic())
        self.wake(WakeReason.clock_jump if jumped else WakeReason.timer)
