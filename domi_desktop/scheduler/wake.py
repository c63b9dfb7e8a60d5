"""The wake plan: when to have the OS wake the machine so that a ``wake_to_run`` schedule runs on
time. Pure, beside the catch-up decision (``decide``): it is handed the schedules, the machine's
state and ``now``, and the runtime arms the OS's alarm (``platform.wake``) at the instant it gives.

Which schedules count: enabled ones saying ``wake_to_run``, whose ``last_due`` is known (a schedule
without one fires nothing), while nothing is paused, and whose conditions the machine could meet once
awake. A wake cannot plug in a charger nor charge a battery, so a schedule held back by the power
(``on_ac_power`` on battery, a charge below ``min_battery_percent``) wakes nothing; the network, on
the other hand, comes back after a wake, so a network condition does not stop one.

The instant is ``LEAD`` before the earliest next due, so that the machine is up and the app has
noticed the resume when the due comes (its 60 s tick, or the OS's resume signal). A due closer than
that gets the due itself: the machine that falls asleep 10 s before a due wakes at the due. A
schedule with a window wakes the machine at the window's start instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from domi_desktop.cron import next_run, parse, zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import Schedule, SystemState
from domi_desktop.scheduler.conditions import Need, unmet
from domi_desktop.scheduler.window import served

LEAD = timedelta(seconds=30)
"""How long before a due the machine is woken."""

_POWER = frozenset({Need.charger, Need.battery})


@dataclass(frozen=True, slots=True)
class WakeTarget:
    """The instant to wake the machine, and what for."""

    at: datetime
    """When the OS should wake the machine (UTC)."""
    due: datetime
    """The due it wakes for (UTC)."""
    schedule_ids: tuple[int, ...]
    """The schedules due then, by id."""


def can_wake_for(schedule: Schedule, state: SystemState) -> bool:
    """Would waking the machine let ``schedule`` run? Not when it waits for power the machine has
    not got (nor will get while it sleeps)."""
    policies = schedule.policies
    if not (schedule.enabled and policies.wake_to_run) or schedule.last_due is None:
        return False
    missing = unmet(policies.conditions, schedule.action.kind, state)
    return not any(item.need in _POWER for item in missing)


def next_due(schedule: Schedule, now: datetime) -> datetime | None:
    """The schedule's first due strictly after ``now`` (and after its ``last_due``), in UTC;
    ``None`` when it never fires again or cannot be evaluated (the planner reports those)."""
    after = now if schedule.last_due is None else max(now, schedule.last_due)
    try:
        upcoming = next_run(parse(schedule.expr), after, zone_for(schedule.tz))
    except DomiError:
        return None
    return None if upcoming is None else upcoming.astimezone(UTC)


def next_start(schedule: Schedule, now: datetime) -> datetime | None:
    """When the machine is wanted up for the schedule: its next due, or for a schedule with a
    window the start of the window its pending due waits for (the one claimed last, or the
    next)."""
    window = schedule.policies.conditions.window
    if window is None:
        return next_due(schedule, now)
    try:
        expr, zone = parse(schedule.expr), zone_for(schedule.tz)
    except DomiError:
        return None
    for due in (schedule.last_due, next_due(schedule, now)):
        stretch = None if due is None else served(expr, zone, window, due)
        if stretch is not None and stretch.start > now:
            return stretch.start.astimezone(UTC)
    return None


def wake_plan(
    schedules: Iterable[Schedule],
    state: SystemState,
    now: datetime,
    *,
    lead: timedelta = LEAD,
    paused: bool = False,
) -> WakeTarget | None:
    """When to wake the machine for the soonest wake-to-run due after ``now``, or ``None``."""
    if paused:
        return None
    soonest: datetime | None = None
    ids: list[int] = []
    for schedule in schedules:
        if not can_wake_for(schedule, state):
            continue
        due = next_start(schedule, now)
        if due is None or (soonest is not None and due > soonest):
            continue
        if soonest is None or due < soonest:
            soonest, ids = due, []
        ids.append(schedule.id)
    if soonest is None:
        return None
    at = soonest - lead
    return WakeTarget(at if at > now else soonest, soonest, tuple(sorted(ids)))
