"""Where an expression meets a zone's DST transitions, and so where schedulers disagree.

Debian cron (domi's rule) runs a fixed time that falls in a spring-forward gap when
the gap ends, and a wildcard job at both copies of a repeated hour. Other schedulers skip the
gap time or run the repeated hour once. This finds the wall times, in a fixed window of years,
where that happens for one expression, so the export can name them instead of hiding them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import lru_cache

from domi_desktop.cron import CronExpr

WINDOW = (2000, 2100)
"""Years searched for transitions: fixed, so an export never depends on today's date."""

_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Shift:
    """One offset change, as the wall minutes it removes (gap) or repeats (fold)."""

    gap: bool
    minutes: tuple[datetime, ...]
    """Naive wall times (whole minutes) that do not exist (gap) or occur twice (fold)."""


@dataclass(frozen=True, slots=True)
class Meeting:
    """The expression matches a gap or fold minute: the first example of each kind."""

    gap_example: datetime | None
    fold_example: datetime | None


def meeting(expr: CronExpr, zone: tzinfo) -> Meeting:
    """The first gap minute a fixed-time job matches and the first fold minute a wildcard job
    matches, in ``WINDOW``: the instants where Debian's rule differs from skip-the-gap,
    run-the-fold-once schedulers."""
    months, hours, minutes = set(expr.months), set(expr.hours), set(expr.minutes)
    gap_example: datetime | None = None
    fold_example: datetime | None = None
    for shift in shifts(zone):
        if shift.gap == expr.wildcard:
            continue  # wildcard gaps and fixed-time folds behave alike everywhere
        if (shift.gap and gap_example is not None) or (not shift.gap and fold_example is not None):
            continue
        for wall in shift.minutes:
            if (
                wall.month in months
                and wall.hour in hours
                and wall.minute in minutes
                and wall.day in expr.day_tables(wall.year, wall.month)[2]
            ):
                if shift.gap:
                    gap_example = wall
                else:
                    fold_example = wall
                break
    return Meeting(gap_example, fold_example)


def shifts(zone: tzinfo) -> tuple[Shift, ...]:
    return _shifts(zone)


@lru_cache(maxsize=64)
def _shifts(zone: tzinfo) -> tuple[Shift, ...]:
    found: list[Shift] = []
    start = datetime(WINDOW[0], 1, 1, tzinfo=UTC)
    end = datetime(WINDOW[1], 1, 1, tzinfo=UTC)
    at, offset = start, _offset(start, zone)
    while at < end:
        following = at + _DAY
        following_offset = _offset(following, zone)
        if following_offset != offset:
            moment = _bisect(at, following, zone, offset)
            found.append(_shift(moment, offset, following_offset))
        at, offset = following, following_offset
    return tuple(found)


def _offset(instant: datetime, zone: tzinfo) -> timedelta:
    offset = instant.astimezone(zone).utcoffset()
    assert offset is not None
    return offset


def _bisect(lo: datetime, hi: datetime, zone: tzinfo, lo_offset: timedelta) -> datetime:
    """The first instant (to the second) in (lo, hi] whose offset is not ``lo_offset``."""
    while hi - lo > timedelta(seconds=1):
        mid = lo + (hi - lo) / 2
        mid = mid.replace(microsecond=0)
        if _offset(mid, zone) == lo_offset:
            lo = mid
        else:
            hi = mid
    return hi


def _shift(moment: datetime, before: timedelta, after: timedelta) -> Shift:
    naive = moment.replace(tzinfo=None)
    old_wall, new_wall = naive + before, naive + after
    first, last = (old_wall, new_wall) if after > before else (new_wall, old_wall)
    minute = first.replace(second=0) + (timedelta(minutes=1) if first.second else timedelta(0))
    walls = []
    while minute < last:
        walls.append(minute)
        minute += timedelta(minutes=1)
    return Shift(gap=after > before, minutes=tuple(walls))


def describe_wall(wall: datetime) -> str:
    return f"{date(wall.year, wall.month, wall.day).isoformat()} {wall:%H:%M}"
