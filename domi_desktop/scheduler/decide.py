"""The scheduler's pure decision: at ``now``, what fires, what was skipped, when to wake next.

For each enabled schedule: ``due = prev_run(expr, now, tz)``; if it is later than ``last_due`` the
schedule fires once, late when ``now - due > 60 s``, and every due strictly between ``last_due`` and
``due`` is recorded as skipped ("rather run too few than too many"). The next wake is the earliest
next fire, but never more than 60 s away, which bounds the drift of timers across sleep.

A ``Planner`` keeps each schedule's next due (``next_run(expr, last_due)``): a schedule fires at
``now`` exactly when that instant is not after ``now``, so an idle wake compares numbers only.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from domi_desktop.cron import (
    FAST_PATH_SPAN,
    CronExpr,
    count_between,
    fires_before,
    next_run,
    parse,
    prev_run,
    zone_for,
)
from domi_desktop.errors import DomiError
from domi_desktop.model import LOCAL_ZONE, CatchUp, Schedule, SkipReason, Trigger
from domi_desktop.scheduler import oneoff
from domi_desktop.scheduler.window import oldest_open

GRACE = timedelta(seconds=60)
"""A fire at most this long after its due is on time; later is late (the seed's rule)."""
MAX_SLEEP = timedelta(seconds=60)
"""The longest the scheduler sleeps between wakes, whatever the next fire."""
MAX_LISTED_SKIPS = 100
"""Skipped dues listed per catch-up; the total is always counted."""


@dataclass(frozen=True, slots=True)
class FireDecision:
    """One schedule's fire at a wake: run it, or record it as skipped by a policy."""

    schedule_id: int
    expected_last_due: datetime | None
    """The ``last_due`` the decision saw: the store advances it only if it is still this."""
    due: datetime
    fired_at: datetime
    late: bool
    trigger: Trigger
    missed_count: int
    """Dues strictly between ``expected_last_due`` and ``due``: each is a skipped run."""
    run: bool
    skip_reason: SkipReason | None
    """Why the due itself is not run (``run`` is False): ``missed``, ``catch_up_window``, ``paused``."""
    delay: timedelta
    """Jitter before the action starts; it never changes the recorded due."""
    expr: CronExpr
    zone: tzinfo
    next_due: datetime | None
    """The schedule's due after this one (UTC): where its plan goes once this fire is claimed."""

    def skipped(self) -> tuple[datetime, ...]:
        """The latest 100 missed dues, oldest first (computed on demand: the store writes them)."""
        if self.missed_count == 0 or self.expected_last_due is None:
            return ()
        limit = min(self.missed_count, MAX_LISTED_SKIPS)
        quick = _hourly_fires(self.expr, self.zone, self.expected_last_due, self.due, limit)
        if quick is not None:
            return quick
        found = fires_before(
            self.expr,
            self.due,
            self.zone,
            after=self.expected_last_due,
            limit=limit,
        )
        return tuple(moment.astimezone(UTC) for moment in found)


_EVERY_HOUR = ("*", "*", "*", "*")
_MINUTE = timedelta(minutes=1)
_HOUR = timedelta(hours=1)


def _hourly_fires(
    expr: CronExpr, zone: tzinfo, after: datetime, end: datetime, limit: int
) -> tuple[datetime, ...] | None:
    """``fires_before`` by arithmetic for an expression that fires every hour (``* * * * *``,
    ``*/5 * * * *``...), or None when it does not apply: a catch-up lists 100 instants per fire,
    and walking ``prev_run`` back 100 times was most of a wake's write. Applies when the zone's
    offset is a whole number of minutes and the same at both ends of a span no longer than
    ``FAST_PATH_SPAN`` (then no DST change lies between: see ``cron._eval``)."""
    if expr.fields[1:] != _EVERY_HOUR:
        return None
    offset = end.astimezone(zone).utcoffset()
    if offset is None or offset.seconds % 60 or offset.microseconds:
        return None
    shift = (offset.days * 86400 + offset.seconds) // 60
    minutes = sorted(((m - shift) % 60 for m in expr.minutes), reverse=True)
    stop = end.astimezone(UTC)
    floor = after.astimezone(UTC)
    hour = stop.replace(minute=0, second=0, microsecond=0)
    found: list[datetime] = []
    while len(found) < limit:
        for minute in minutes:
            moment = hour + minute * _MINUTE
            if moment >= stop:
                continue
            if moment <= floor or len(found) == limit:
                break
            found.append(moment)
        else:
            hour -= _HOUR
            continue
        break
    if found and (
        stop - found[-1] > FAST_PATH_SPAN or found[-1].astimezone(zone).utcoffset() != offset
    ):
        return None
    found.reverse()
    return tuple(found)


@dataclass(frozen=True, slots=True)
class WakePlan:
    now: datetime
    fires: tuple[FireDecision, ...]
    next_fire: datetime | None
    """The earliest upcoming fire over all schedules (UTC), ``None`` when nothing is scheduled."""
    next_wake: datetime
    errors: tuple[tuple[int, str], ...] = ()
    """Schedules that cannot be evaluated (a zone that vanished from the OS...), with the reason."""


class _Entry:
    __slots__ = ("expr", "last_ts", "next_ts", "schedule", "zone")

    def __init__(self, schedule: Schedule, expr: CronExpr, zone: tzinfo, next_ts: float) -> None:
        self.schedule = schedule
        self.expr = expr
        self.zone = zone
        self.next_ts = next_ts
        self.last_ts = -_NEVER if schedule.last_due is None else schedule.last_due.timestamp()


_NEVER = float("inf")


class Planner:
    """The decision over many schedules, with each one's next due cached as a UTC timestamp."""

    def __init__(self, schedules: Iterable[Schedule] = ()) -> None:
        self._entries: dict[int, _Entry] = {}
        self._errors: dict[int, str] = {}
        for schedule in schedules:
            self.upsert(schedule)

    def upsert(self, schedule: Schedule, fired: FireDecision | None = None) -> None:
        """Add or replace a schedule (after an edit, an enable, or a fire changed ``last_due``:
        ``fired``, whose ``next_due`` is then the schedule's next, with no cron evaluated)."""
        entry = self._entries.pop(schedule.id, None)
        self._errors.pop(schedule.id, None)
        if not schedule.enabled or schedule.policies.session.only or oneoff.done(schedule):
            return
        if entry is not None and (entry.schedule.expr, entry.schedule.tz) == (
            schedule.expr,
            schedule.tz,
        ):
            # A fire moved ``last_due``: a whole catch-up does this for every schedule at once.
            if fired is not None and fired.due == schedule.last_due:
                upcoming = oneoff.planned(schedule, fired.next_due)
                next_ts = _NEVER if upcoming is None else upcoming.timestamp()
            else:
                next_ts = self._next_ts(schedule, entry.expr, entry.zone)
            self._entries[schedule.id] = _Entry(schedule, entry.expr, entry.zone, next_ts)
            return
        try:
            expr = parse(schedule.expr)
            zone = zone_for(schedule.tz)
        except DomiError as error:
            self._errors[schedule.id] = str(error)
            return
        self._entries[schedule.id] = _Entry(
            schedule, expr, zone, self._next_ts(schedule, expr, zone)
        )

    def remove(self, schedule_id: int) -> None:
        self._entries.pop(schedule_id, None)
        self._errors.pop(schedule_id, None)

    def fail(self, schedule_id: int, reason: str) -> None:
        """The schedule cannot be read: it is out of the plan, and the reason is in every plan's
        ``errors`` until it is repaired or removed."""
        self._entries.pop(schedule_id, None)
        self._errors[schedule_id] = reason

    def ahead(self, now: datetime) -> list[Schedule]:
        """The schedules whose ``last_due`` is later than ``now``: the wall clock went back."""
        now_ts = now.timestamp()
        return [entry.schedule for entry in self._entries.values() if entry.last_ts > now_ts]

    def soonest(self) -> tuple[datetime, Schedule] | None:
        """The schedule that fires next and when (UTC), from the cache: no cron evaluated."""
        entry = min(self._entries.values(), key=lambda e: e.next_ts, default=None)
        if entry is None or entry.next_ts == _NEVER:
            return None
        return datetime.fromtimestamp(entry.next_ts, UTC), entry.schedule

    def soonest_n(self, count: int) -> list[tuple[datetime, Schedule]]:
        """The ``count`` schedules that fire next, soonest first, from the cache."""
        entries = heapq.nsmallest(
            count,
            (e for e in self._entries.values() if e.next_ts != _NEVER),
            key=lambda e: e.next_ts,
        )
        return [(datetime.fromtimestamp(e.next_ts, UTC), e.schedule) for e in entries]

    def zone_changed(self) -> None:
        """The OS zone changed: ``local`` schedules re-resolve it and re-plan."""
        for entry in list(self._entries.values()):
            if entry.schedule.tz == LOCAL_ZONE:
                del self._entries[entry.schedule.id]  # not reused by ``upsert``: re-resolved
                self.upsert(entry.schedule)

    def next_fire(self, schedule_id: int) -> datetime | None:
        entry = self._entries.get(schedule_id)
        if entry is None or entry.next_ts == _NEVER:
            return None
        return datetime.fromtimestamp(entry.next_ts, UTC)

    def next_fires(self) -> dict[int, float]:
        """Schedule id -> its next fire as a UTC timestamp, for those with one planned."""
        return {sid: e.next_ts for sid, e in self._entries.items() if e.next_ts != _NEVER}

    def plan(self, now: datetime, *, paused: bool = False) -> WakePlan:
        """What fires at ``now`` and when to wake next. Changes nothing."""
        now_ts = now.timestamp()
        decisions = []
        for entry in self._entries.values():
            if entry.next_ts <= now_ts:
                fire = decide(entry.schedule, now, expr=entry.expr, zone=entry.zone, paused=paused)
                if fire is not None:
                    decisions.append(fire)
        return self.plan_with(now, tuple(decisions))

    def plan_with(self, now: datetime, decisions: tuple[FireDecision, ...]) -> WakePlan:
        """The plan at ``now`` with ``decisions`` made: when to wake next."""
        now_ts = now.timestamp()
        soonest = _NEVER
        for entry in self._entries.values():
            if now_ts < entry.next_ts < soonest:
                soonest = entry.next_ts
        for decision in decisions:
            if decision.next_due is not None:
                soonest = min(soonest, decision.next_due.timestamp())
        next_fire = None if soonest == _NEVER else datetime.fromtimestamp(soonest, UTC)
        cap = now + MAX_SLEEP
        next_wake = cap if next_fire is None or next_fire > cap else next_fire
        return WakePlan(
            now=now,
            fires=decisions,
            next_fire=next_fire,
            next_wake=next_wake,
            errors=tuple(sorted(self._errors.items())),
        )

    @staticmethod
    def _next_ts(schedule: Schedule, expr: CronExpr, zone: tzinfo) -> float:
        if schedule.last_due is None:
            return _NEVER
        upcoming = None
        if schedule.policies.once_at is None:
            upcoming = next_run(expr, schedule.last_due, zone)
        upcoming = oneoff.planned(schedule, upcoming)
        return _NEVER if upcoming is None else upcoming.timestamp()


def decide(
    schedule: Schedule,
    now: datetime,
    *,
    expr: CronExpr | None = None,
    zone: tzinfo | None = None,
    paused: bool = False,
) -> FireDecision | None:
    """One schedule at ``now``: the fire it owes, or ``None``. Pure; raises ``DomiError`` on bad
    expression or zone."""
    if not schedule.enabled or schedule.last_due is None or schedule.policies.session.only:
        return None
    expr = expr or parse(schedule.expr)
    zone = zone or zone_for(schedule.tz)
    once = schedule.policies.once_at is not None
    due = oneoff.once_due(schedule, now) if once else prev_run(expr, now, zone)
    if due is None or due <= schedule.last_due or oneoff.snoozed(schedule, due, now):
        return None
    window = schedule.policies.conditions.window
    if window is not None:
        # The next wake (at once: the next due is then in the past) fires the later ones.
        due = oldest_open(expr, zone, window, schedule.last_due, due, now)
    lateness = now - due
    late = lateness > GRACE
    missed = 0 if once else count_between(expr, schedule.last_due, due, zone)
    policies = schedule.policies
    skip_reason: SkipReason | None = None
    if oneoff.you_skipped(schedule, due):
        skip_reason = SkipReason.you_skipped
    elif paused:
        skip_reason = SkipReason.paused
    elif late and policies.catch_up is CatchUp.skip:
        skip_reason = SkipReason.missed
    elif late and policies.catch_up_within is not None and lateness > policies.catch_up_within:
        skip_reason = SkipReason.catch_up_window
    return FireDecision(
        schedule_id=schedule.id,
        expected_last_due=schedule.last_due,
        due=due.astimezone(UTC),
        fired_at=now,
        late=late,
        trigger=Trigger.catch_up if late else Trigger.scheduled,
        missed_count=missed,
        run=skip_reason is None,
        skip_reason=skip_reason,
        delay=jitter_delay(schedule, due),
        expr=expr,
        zone=zone,
        next_due=None if once else _utc(next_run(expr, due, zone)),
    )


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


def jitter_delay(schedule: Schedule, due: datetime) -> timedelta:
    """A delay in [0, jitter) that is the same for the same schedule and due (testable, spread)."""
    jitter = schedule.policies.jitter
    if jitter <= timedelta(0):
        return timedelta(0)
    digest = hashlib.blake2b(f"{schedule.id}:{due.timestamp()}".encode(), digest_size=8).digest()
    fraction = int.from_bytes(digest, "big") / 2**64
    return timedelta(microseconds=int(jitter / timedelta(microseconds=1) * fraction))


def plan(schedules: Iterable[Schedule], now: datetime, *, paused: bool = False) -> WakePlan:
    """The decision for a set of schedules at ``now`` (a ``Planner`` used once)."""
    return Planner(schedules).plan(now, paused=paused)
