"""Evaluation: the next and previous fire instants of an expression in a time zone.

The search runs on wall-clock fields (year, month, day, hour, minute), jumping with the
precomputed tables of ``CronExpr``; the wall time found is then mapped to an instant with
Debian cron's DST rule. The common case (no offset change nearby) is answered by a
fast path; DST gaps and folds go through ``_next_careful``/``_prev_careful``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo

from domi_desktop.cron._expr import CronExpr
from domi_desktop.cron._parse import parse
from domi_desktop.cron._zones import zone_for

HORIZON_YEARS = 400
"""Search bound. Parsing rejects never-firing expressions; the rarest real ones (Feb 29 on a given
weekday) recur within 40 years, so reaching this means datetime's range ends first."""

FAST_PATH_SPAN = timedelta(days=3)
"""When two instants are this close and have the same UTC offset, no DST transition lies between
them: the shortest offset change that reverts in the tz database lasts 3.99 days
(Africa/Freetown, 1939); tests/unit/cron/test_zones.py checks every installed zone."""

_MINUTE = timedelta(minutes=1)
_EPOCH = datetime(1970, 1, 1)

Wall = tuple[int, int, int, int, int]


def next_run(expr: CronExpr | str, after: datetime, tz: str | tzinfo) -> datetime | None:
    """The first fire strictly after ``after`` (aware), as an aware datetime in the zone ``tz``."""
    e = expr if isinstance(expr, CronExpr) else parse(expr)
    zone = zone_for(tz)
    if after.tzinfo is None:
        raise ValueError("next_run needs an aware datetime (with a tzinfo)")
    local = after.astimezone(zone)
    found = _search_forward(
        e, local.year, local.month, local.day, local.hour, local.minute + 1, local.year
    )
    if found is None:
        return None
    candidate = datetime(*found, tzinfo=zone)
    offset = local.utcoffset()
    if (
        candidate.utcoffset() == offset
        and candidate.replace(fold=1).utcoffset() == offset
        and candidate - local <= FAST_PATH_SPAN
    ):
        return candidate
    return _next_careful(e, local, found, zone)


def prev_run(expr: CronExpr | str, at: datetime, tz: str | tzinfo) -> datetime | None:
    """The last fire at or before ``at`` (aware), as an aware datetime in the zone ``tz``."""
    e = expr if isinstance(expr, CronExpr) else parse(expr)
    zone = zone_for(tz)
    if at.tzinfo is None:
        raise ValueError("prev_run needs an aware datetime (with a tzinfo)")
    local = at.astimezone(zone)
    found = _search_backward(e, local.year, local.month, local.day, local.hour, local.minute)
    if found is None:
        return None
    candidate = datetime(*found, tzinfo=zone)
    offset = local.utcoffset()
    if (
        candidate.utcoffset() == offset
        and candidate.replace(fold=1).utcoffset() == offset
        and local - candidate <= FAST_PATH_SPAN
    ):
        return candidate
    return _prev_careful(e, local, found, zone)


def upcoming(expr: CronExpr | str, after: datetime, tz: str | tzinfo) -> Iterator[datetime]:
    """The fires strictly after ``after``, in order, as ``next_run`` gives them; ends when none
    is left within the horizon. The expression and the zone (``local`` too) are resolved once,
    here, not at each step: one evaluation sees one zone."""
    e = expr if isinstance(expr, CronExpr) else parse(expr)
    zone = zone_for(tz)
    if after.tzinfo is None:
        raise ValueError("upcoming needs an aware datetime (with a tzinfo)")
    return _upcoming(e, after, zone)


def _upcoming(e: CronExpr, after: datetime, zone: tzinfo) -> Iterator[datetime]:
    fire = next_run(e, after, zone)
    while fire is not None:
        yield fire
        fire = next_run(e, fire, zone)


def _search_forward(
    e: CronExpr, y: int, mo: int, d: int, h: int, mi: int, base_year: int
) -> Wall | None:
    """The smallest matching wall time >= the given fields (which may overflow by one unit)."""
    next_month, next_hour, next_minute = e.next_month, e.next_hour, e.next_minute
    limit = min(base_year + HORIZON_YEARS, 9999)
    while y <= limit:
        month = next_month[mo] if mo <= 12 else -1
        if month < 0:
            y, mo, d, h, mi = y + 1, 1, 1, 0, 0
            continue
        if month != mo:
            mo, d, h, mi = month, 1, 0, 0
        day = e.day_tables(y, mo)[0][d] if d <= 32 else 0
        if day == 0:
            mo, d, h, mi = mo + 1, 1, 0, 0
            continue
        if day != d:
            d, h, mi = day, 0, 0
        hour = next_hour[h]
        if hour < 0:
            d, h, mi = d + 1, 0, 0
            continue
        if hour != h:
            h, mi = hour, 0
        minute = next_minute[mi]
        if minute < 0:
            h, mi = h + 1, 0
            continue
        return y, mo, d, h, minute
    return None


def _search_backward(e: CronExpr, y: int, mo: int, d: int, h: int, mi: int) -> Wall | None:
    """The largest matching wall time <= the given fields (which may underflow by one unit)."""
    prev_month, prev_hour, prev_minute = e.prev_month, e.prev_hour, e.prev_minute
    limit = max(y - HORIZON_YEARS, 1)
    while y >= limit:
        month = prev_month[mo] if mo >= 1 else -1
        if month < 0:
            y, mo, d, h, mi = y - 1, 12, 31, 23, 59
            continue
        if month != mo:
            mo, d, h, mi = month, 31, 23, 59
        day = e.day_tables(y, mo)[1][d] if d >= 1 else 0
        if day == 0:
            mo, d, h, mi = mo - 1, 31, 23, 59
            continue
        if day != d:
            d, h, mi = day, 23, 59
        hour = prev_hour[h] if h >= 0 else -1
        if hour < 0:
            d, h, mi = d - 1, 23, 59
            continue
        if hour != h:
            h, mi = hour, 59
        minute = prev_minute[mi] if mi >= 0 else -1
        if minute < 0:
            h, mi = h - 1, 59
            continue
        return y, mo, d, h, minute
    return None


def _instant(dt: datetime) -> datetime:
    """Naive UTC. Aware datetimes sharing a tzinfo compare by wall time, ignoring the fold."""
    offset = dt.utcoffset()
    assert offset is not None
    return dt.replace(tzinfo=None) - offset


def _seconds(instant: datetime) -> int:
    return int((instant - _EPOCH).total_seconds())


def _transition(lo: int, hi: int, zone: tzinfo, lo_offset: timedelta) -> datetime:
    """The first second in (lo, hi] whose UTC offset differs from ``lo_offset``, in ``zone``."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _at(mid, zone).utcoffset() == lo_offset:
            lo = mid
        else:
            hi = mid
    return _at(hi, zone)


def _at(seconds: int, zone: tzinfo) -> datetime:
    return (_EPOCH + timedelta(seconds=seconds)).replace(tzinfo=UTC).astimezone(zone)


def _resolve(e: CronExpr, wall: Wall, zone: tzinfo) -> list[datetime]:
    """The instants a matching wall time fires at, in order (Debian cron's DST rule)."""
    first = datetime(*wall, tzinfo=zone)
    second = first.replace(fold=1)
    before, after = first.utcoffset(), second.utcoffset()
    assert before is not None and after is not None
    if before == after:
        return [first]
    if before > after:
        # A repeated hour: wildcard jobs fire in both copies, fixed-time jobs in the first only.
        return [first, second] if e.wildcard else [first]
    if e.wildcard:
        return []  # The wall time does not exist and a wildcard job follows the wall clock.
    # A fixed-time job whose time falls in a gap fires at the first instant after the gap.
    return [_transition(_seconds(_instant(second)), _seconds(_instant(first)), zone, before)]


def _next_careful(e: CronExpr, local: datetime, found: Wall, zone: tzinfo) -> datetime | None:
    after = _instant(local)
    wall: Wall | None = found
    result: datetime | None = None
    while wall is not None and result is None:
        for candidate in _resolve(e, wall, zone):
            if _instant(candidate) > after:
                result = candidate
                break
        else:
            y, mo, d, h, mi = wall
            wall = _search_forward(e, y, mo, d, h, mi + 1, local.year)
    if result is None:
        return None
    start_offset, result_offset = local.utcoffset(), result.utcoffset()
    assert start_offset is not None and result_offset is not None
    if e.wildcard and result_offset < start_offset:
        # The clock went back in between: the repeated copy of the hour may hold an earlier fire.
        shift = _transition(_seconds(after), _seconds(_instant(result)), zone, start_offset)
        repeat_end = shift.replace(tzinfo=None) + (start_offset - result_offset)
        again = _search_forward(
            e,
            shift.year,
            shift.month,
            shift.day,
            shift.hour,
            shift.minute + (1 if shift.second or shift.microsecond else 0),
            shift.year,
        )
        if again is not None and datetime(*again) < repeat_end:
            repeated = datetime(*again, tzinfo=zone, fold=1)
            if after < _instant(repeated) < _instant(result):
                result = repeated
    return result


def _prev_careful(e: CronExpr, local: datetime, found: Wall, zone: tzinfo) -> datetime | None:
    at = _instant(local)
    wall: Wall | None = found
    result: datetime | None = None
    while wall is not None and result is None:
        for candidate in reversed(_resolve(e, wall, zone)):
            if _instant(candidate) <= at:
                result = candidate
                break
        else:
            y, mo, d, h, mi = wall
            wall = _search_backward(e, y, mo, d, h, mi - 1)
    if result is None:
        return None
    end_offset, result_offset = local.utcoffset(), result.utcoffset()
    assert end_offset is not None and result_offset is not None
    if result_offset > end_offset:
        # The clock went back in between: the first copy of the hour may hold a later fire.
        shift = _transition(_seconds(_instant(result)), _seconds(at), zone, result_offset)
        repeat_start = shift.replace(tzinfo=None)
        last = repeat_start + (result_offset - end_offset) - _MINUTE
        again = _search_backward(e, last.year, last.month, last.day, last.hour, last.minute)
        if again is not None and datetime(*again) >= repeat_start:
            first_copy = datetime(*again, tzinfo=zone)
            if _instant(result) < _instant(first_copy) <= at:
                result = first_copy
    return result
