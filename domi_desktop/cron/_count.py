"""Counting and listing the fires inside an interval without walking every one of them.

A laptop asleep for two weeks misses 20,159 fires of ``* * * * *``; the scheduler records how many
(on the fire that catches up) and lists only the latest 100. Counting works on wall-clock fields
month by month, split at the zone's offset changes, with Debian's DST rule applied at each change
(see ``_eval._resolve``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from datetime import UTC, date, datetime, timedelta, tzinfo

from domi_desktop.cron._eval import FAST_PATH_SPAN, _instant, _seconds, _transition, prev_run
from domi_desktop.cron._expr import CronExpr
from domi_desktop.cron._parse import parse
from domi_desktop.cron._zones import zone_for

_MINUTE = timedelta(minutes=1)
_TICK = timedelta(microseconds=1)
_LOOK_BACK = timedelta(hours=3)
"""Longer than any DST shift (2 h at most, Antarctica/Troll): a fall-back's repeated hour that an
interval starts inside began at most this long before it."""


def count_between(expr: CronExpr | str, start: datetime, end: datetime, tz: str | tzinfo) -> int:
    """How many fires lie strictly between ``start`` and ``end`` (aware datetimes)."""
    e = expr if isinstance(expr, CronExpr) else parse(expr)
    zone = zone_for(tz)
    # Fires fall on whole seconds, so (start, end) is [start + 1 µs, end).
    lo, hi = _naive_utc(start) + _TICK, _naive_utc(end)
    if hi <= lo:
        return 0
    return sum(
        _count_segment(e, seg_lo, seg_hi, offset, changed_from, changed_at)
        for seg_lo, seg_hi, offset, changed_from, changed_at in _segments(zone, lo, hi)
    )


def fires_before(
    expr: CronExpr | str, end: datetime, tz: str | tzinfo, *, after: datetime, limit: int
) -> list[datetime]:
    """The latest ``limit`` fires strictly between ``after`` and ``end``, oldest first."""
    e = expr if isinstance(expr, CronExpr) else parse(expr)
    zone = zone_for(tz)
    floor = _naive_utc(after)
    found: list[datetime] = []
    cursor = end.astimezone(UTC) - timedelta(microseconds=1)
    while len(found) < limit:
        fire = prev_run(e, cursor, zone)
        if fire is None or _instant(fire) <= floor:
            break
        found.append(fire)
        cursor = fire.astimezone(UTC) - timedelta(microseconds=1)
    found.reverse()
    return found


def _naive_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("an aware datetime (with a tzinfo) is needed")
    return _instant(moment)


def _offset(zone: tzinfo, instant: datetime) -> timedelta:
    offset = instant.replace(tzinfo=UTC).astimezone(zone).utcoffset()
    assert offset is not None
    return offset


def _segments(
    zone: tzinfo, lo: datetime, hi: datetime
) -> list[tuple[datetime, datetime, timedelta, timedelta | None, datetime]]:
    """[lo, hi) cut where the UTC offset changes: (start, end, offset, offset before the last
    change or None, the instant of that change).

    The first piece also looks back ``_LOOK_BACK``: an interval may start at a change (a
    fixed-time job's gap fire lands there) or inside the repeated hour of a fall-back, whose first
    copy lies before it. Probing every ``FAST_PATH_SPAN`` finds every change: no zone reverts an
    offset change that quickly (tests/unit/cron/test_zones.py checks the installed tz database), and a
    probe that sees a change resumes right after it.
    """
    offset = _offset(zone, lo)
    before: timedelta | None = None
    changed_at = lo
    back = lo.replace(microsecond=0) - _LOOK_BACK
    back_offset = _offset(zone, back)
    if back_offset != offset:
        shift = _transition(_seconds(back), _seconds(lo.replace(microsecond=0)), zone, back_offset)
        if shift.utcoffset() == offset:
            before, changed_at = back_offset, _instant(shift)
    end_offset = _offset(zone, hi)
    if end_offset == offset and hi - lo <= FAST_PATH_SPAN:
        return [(lo, hi, offset, before, changed_at)]
    pieces: list[tuple[datetime, datetime, timedelta, timedelta | None, datetime]] = []
    seg_start, cursor = lo, lo
    while cursor < hi:
        probe = min(cursor + FAST_PATH_SPAN, hi)
        probe_offset = end_offset if probe == hi else _offset(zone, probe)
        if probe_offset == offset:
            cursor = probe
            continue
        shift = _transition(_seconds(cursor), _seconds(probe), zone, offset)
        change = _instant(shift)
        if change >= hi:
            break
        pieces.append((seg_start, change, offset, before, changed_at))
        new_offset = shift.utcoffset()
        assert new_offset is not None
        seg_start, before, cursor, offset, changed_at = change, offset, change, new_offset, change
    pieces.append((seg_start, hi, offset, before, changed_at))
    return pieces


def _count_segment(
    e: CronExpr,
    lo: datetime,
    hi: datetime,
    offset: timedelta,
    before: timedelta | None,
    changed_at: datetime,
) -> int:
    """Fires in [lo, hi), an interval of constant ``offset``; when ``before``, the offset was
    ``before`` until ``changed_at`` (at or before ``lo``)."""
    wall_lo, wall_hi = lo + offset, hi + offset
    count = _count_walls(e, wall_lo, wall_hi)
    if before is None or e.wildcard:
        return count
    if offset > before:
        if changed_at != lo:
            return count  # the gap's fire is at the change, before this interval
        # Spring forward: a fixed-time job whose time fell in the gap fires once, at the change.
        # It is one instant with a fire at the first wall time after the gap, if that matches.
        gap_fire = _count_walls(e, lo + before, wall_lo) > 0
        at_change = _count_walls(e, wall_lo, wall_lo + _MINUTE) > 0
        return count + (1 if gap_fire and not at_change else 0)
    # Fall back: fixed-time jobs fired in the first copy of the repeated wall times, so none of
    # the second copy (walls from the change on, for the length of the shift) counts again.
    repeat_end = min(changed_at + before, wall_hi)
    return count - _count_walls(e, wall_lo, repeat_end)


def _count_walls(e: CronExpr, lo: datetime, hi: datetime) -> int:
    """Matching wall times w (whole minutes) with lo <= w < hi, month by month."""
    if lo.second or lo.microsecond:
        lo = lo.replace(second=0, microsecond=0) + _MINUTE
    if hi <= lo:
        return 0
    per_day = len(e.hours) * len(e.minutes)
    lo_day, hi_day = lo.toordinal(), hi.toordinal()
    before_lo = _pairs_before(e, lo.hour, lo.minute)
    before_hi = _pairs_before(e, hi.hour, hi.minute + (1 if hi.second or hi.microsecond else 0))
    total = 0
    year, month = lo.year, lo.month
    while (year, month) <= (hi.year, hi.month):
        if e.next_month[month] == month:
            day_zero = date(year, month, 1).toordinal() - 1
            days = e.day_tables(year, month)[2]
            first = bisect_left(days, lo_day - day_zero)
            last = bisect_right(days, hi_day - day_zero)
            if last > first:
                total += (last - first) * per_day
                if days[first] + day_zero == lo_day:
                    total -= before_lo
                if days[last - 1] + day_zero == hi_day:
                    total -= per_day - before_hi
        month += 1
        if month == 13:
            year, month = year + 1, 1
    return total


def _pairs_before(e: CronExpr, hour: int, minute: int) -> int:
    """Matching (hour, minute) pairs of a day strictly before hour:minute (minute may be 60)."""
    count = bisect_left(e.hours, hour) * len(e.minutes)
    if hour in e.hours:
        count += bisect_left(e.minutes, minute)
    return count
