"""One-off schedules and the user's word on a coming due (skip it, snooze it): pure rules.

A one-off runs at one instant, fixed when it is set (the wall time read in its zone then), under
the same catch-up rule as a cron due: missed while asleep, it runs once, late, at the wake. It is
done once ``last_due`` reaches that instant, and then it stays, shown as done, never planned again:
a wall clock set back or a new OS zone cannot bring it back.

A hold names one due. Skipped, that due is recorded ``skipped`` (``you_skipped``) when it comes.
Snoozed, nothing fires for it before ``until``; then the usual decision runs, so the run keeps its
due, is late against it, and the compare-and-set on ``last_due`` lets it run once only. A hold
whose due is behind ``last_due`` is spent and changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo

from domi_desktop.cron import next_run, parse, zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import Hold, Schedule

_MINUTE = timedelta(minutes=1)


class OneOffError(DomiError, ValueError):
    """A one-off time or a skip/snooze that cannot be: the message says what and why."""


def resolve_wall(wall: datetime, zone: tzinfo) -> datetime:
    """The instant (UTC) a naive wall time names in ``zone``, by cron's fixed-time rule: inside a
    fall-back fold its first occurrence, inside a spring-forward gap the first instant after it."""
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) == wall:
        return first
    later = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    start, end = min(first, later), max(first, later)
    moment = start.replace(second=0, microsecond=0)
    while moment < end and moment.astimezone(zone).replace(tzinfo=None) <= wall:
        moment += _MINUTE
    return moment


def one_off_expr(at: datetime, zone: tzinfo) -> str:
    """The cron expression naming the one-off's date and time in its zone (for lists, exports
    and readers that know no one-offs; the scheduler itself goes by ``once_at``)."""
    local = at.astimezone(zone)
    return f"{local.minute} {local.hour} {local.day} {local.month} *"


def once_at_from(wall: datetime, tz: str, now: datetime) -> tuple[datetime, str]:
    """The one-off instant and its expression for ``--at`` ``wall`` (naive, or aware: then its own
    offset counts) in ``tz``; refused when it is not later than ``now``."""
    zone = zone_for(tz)
    at = wall.astimezone(UTC) if wall.tzinfo is not None else resolve_wall(wall, zone)
    if at <= now:
        shown = at.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")
        raise OneOffError(f"--at: {shown} has passed; a one-off must be in the future")
    return at, one_off_expr(at, zone)


def done(schedule: Schedule) -> bool:
    """A one-off that ran or was recorded skipped: kept, shown as done, never planned."""
    at = schedule.policies.once_at
    return at is not None and schedule.last_due is not None and schedule.last_due >= at


def once_due(schedule: Schedule, now: datetime) -> datetime | None:
    """A one-off's due at ``now``: its instant once it has come and not yet been decided."""
    at = schedule.policies.once_at
    if at is None or schedule.last_due is None or done(schedule) or at > now:
        return None
    return at


def snoozed(schedule: Schedule, due: datetime, now: datetime) -> bool:
    """Whether ``due`` must wait: a snooze names it (or a due before it that has not come round
    yet) and its time is not up."""
    hold = schedule.policies.hold
    if hold is None or hold.until is None or now >= hold.until:
        return False
    return _live(hold, schedule) and hold.due <= due


def you_skipped(schedule: Schedule, due: datetime) -> bool:
    hold = schedule.policies.hold
    return hold is not None and hold.skip and hold.due == due and _live(hold, schedule)


def planned(schedule: Schedule, upcoming: datetime | None) -> datetime | None:
    """When the schedule is next worth a look, given its next cron due ``upcoming``: a one-off's
    instant (never, once done), a snoozed due's ``until``."""
    if schedule.policies.once_at is not None:
        return None if done(schedule) or schedule.last_due is None else schedule.policies.once_at
    hold = schedule.policies.hold
    if (
        upcoming is not None
        and hold is not None
        and hold.until is not None
        and _live(hold, schedule)
        and hold.due <= upcoming
    ):
        return max(upcoming, hold.until)
    return upcoming


def live_hold(schedule: Schedule) -> Hold | None:
    """The schedule's hold while it still applies (its due not yet decided)."""
    hold = schedule.policies.hold
    return hold if hold is not None and _live(hold, schedule) else None


def _live(hold: Hold, schedule: Schedule) -> bool:
    return schedule.last_due is None or hold.due > schedule.last_due


def coming_due(schedule: Schedule, now: datetime) -> datetime:
    """The due a skip or snooze pressed at ``now`` is about: one already held by a snooze, else
    the first due after ``now`` (a one-off's instant)."""
    held = live_hold(schedule)
    if held is not None and held.until is not None and held.until > now:
        return held.due
    if schedule.policies.once_at is not None:
        if done(schedule):
            raise OneOffError(f"schedule {schedule.id} ({schedule.name}) is done: it ran once")
        return schedule.policies.once_at
    after = max(now, schedule.last_due) if schedule.last_due is not None else now
    upcoming = next_run(parse(schedule.expr), after, zone_for(schedule.tz))
    if upcoming is None:
        raise OneOffError(f"schedule {schedule.id} ({schedule.name}) has no coming run")
    return upcoming.astimezone(UTC)


def skip_next(schedule: Schedule, now: datetime) -> Hold:
    return Hold(due=coming_due(schedule, now))


def snooze_next(schedule: Schedule, now: datetime, span: timedelta) -> Hold:
    """Snooze the coming due by ``span``: counted from now when it is already due (pressed on its
    notification), else from the due."""
    if span <= timedelta(0):
        raise OneOffError("snooze: the time must be longer than zero, such as 10m or 1h")
    due = coming_due(schedule, now)
    return Hold(due=due, until=max(due, now) + span)
