"""Once inside a window: the pure decision of a schedule with ``Conditions.window``.

The cron expression gives the period; the window gives the hours. Each due *serves* one stretch of
real time (``served``), and its run starts at the first moment of that stretch at which the other
conditions hold, or is recorded at the stretch's end with why not (``window_reason``).

Which stretch a due serves, so that stretches of successive dues never overlap:

1. the first window that starts at or after the due and before the next due (``@daily`` with
   ``22:00-06:00``: the night that begins that day), cut at the next due when the next due falls
   inside it and serves it by rule 2;
2. else the window the due falls in, from the due to the window's end or the next due, whichever
   comes first (``@hourly`` inside the night: each hour of the night once);
3. else none: the due lies outside every window and is skipped, saying so.

A window keeps its wall-clock edges in the schedule's zone and is one stretch of real time: it
begins the first instant its start's wall time is reached (a start inside a DST gap: the first
instant after the gap; inside a fold: the first occurrence) and ends the last instant its end's wall
time is (an end inside a gap: the gap's instant; inside a fold: the second occurrence), so a night
of ``22:00-06:00`` lasts 7 h or 9 h across the changes. Nothing here reads a clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from domi_desktop.cron import CronExpr, next_run
from domi_desktop.errors import ParamError
from domi_desktop.model import AtWindowEnd, Conditions, SystemState, Window
from domi_desktop.scheduler.conditions import Gate, Need, Unmet, Verdict, gate, join_words

_TEXT = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")


def parse_window(text: str, where: str = "window") -> Window:
    """``22:00-06:00`` -> ``Window``; a ``ParamError`` naming ``where`` otherwise."""
    found = _TEXT.match(text)
    if found is None:
        raise ParamError(where, f"{text!r} is not HH:MM-HH:MM (e.g. 22:00-06:00)")
    h1, m1, h2, m2 = (int(part) for part in found.groups())
    for hour, minute in ((h1, m1), (h2, m2)):
        if hour > 23 or minute > 59:
            raise ParamError(
                where, f"{hour:02}:{minute:02} in {text.strip()!r} is not a time of day"
            )
    if (h1, m1) == (h2, m2):
        raise ParamError(where, f"{text.strip()!r} starts and ends at the same time")
    return Window(time(h1, m1), time(h2, m2))


@dataclass(frozen=True, slots=True)
class Stretch:
    """One window's real time, or the part of it a due serves: ``[start, end)`` in UTC."""

    start: datetime
    end: datetime
    window: Window

    @property
    def length(self) -> timedelta:
        return self.end - self.start

    def holds(self, at: datetime) -> bool:
        return self.start <= at < self.end


def wall_instant(day: date, at: time, zone: tzinfo, *, last: bool) -> datetime:
    """The instant (UTC) the wall clock of ``zone`` reads ``day at``: in a fold the first
    occurrence, or the second with ``last``; in a gap the first instant after it."""
    first = datetime.combine(day, at, tzinfo=zone)
    second = first.replace(fold=1)
    early, late = first.astimezone(UTC), second.astimezone(UTC)
    if early <= late:
        # A fold (the two readings differ) or an ordinary time (they are equal).
        return late if last else early
    # In a gap the fold=0 reading lands after the gap and fold=1 before it: the first instant
    # with the later offset lies between them.
    lo, hi = late, early
    offset = lo.astimezone(zone).utcoffset()
    while hi - lo > timedelta(seconds=1):
        mid = lo + (hi - lo) / 2
        if mid.astimezone(zone).utcoffset() == offset:
            lo = mid
        else:
            hi = mid
    return hi.replace(microsecond=0) if hi.microsecond else hi


def occurrence(window: Window, day: date, zone: tzinfo) -> Stretch:
    """The window that starts on the local ``day``."""
    start = wall_instant(day, window.start, zone, last=False)
    end_day = day + timedelta(days=1) if window.crosses_midnight else day
    end = wall_instant(end_day, window.end, zone, last=True)
    return Stretch(start, max(end, start), window)


def _local_day(at: datetime, zone: tzinfo) -> date:
    return at.astimezone(zone).date()


def first_starting(window: Window, at: datetime, zone: tzinfo) -> Stretch:
    """The first window whose start is at or after ``at``."""
    day = _local_day(at, zone) - timedelta(days=1)
    while True:
        found = occurrence(window, day, zone)
        if found.start >= at and found.end > found.start:
            return found
        day += timedelta(days=1)


def containing(window: Window, at: datetime, zone: tzinfo) -> Stretch | None:
    """The window ``at`` falls in, if any."""
    day = _local_day(at, zone)
    for back in (1, 0):
        found = occurrence(window, day - timedelta(days=back), zone)
        if found.holds(at):
            return found
    return None


def served(expr: CronExpr | str, zone: tzinfo, window: Window, due: datetime) -> Stretch | None:
    """The stretch the run due at ``due`` may start in (see the module's rules); ``None``: the
    due lies outside every window."""
    due = due.astimezone(UTC)
    following = next_run(expr, due, zone)
    kind, stretch = _rule(expr, zone, window, due, following)
    if kind == 1 and following is not None and stretch.holds(following):
        after = next_run(expr, following, zone)
        if _rule(expr, zone, window, following, after)[0] == 2:
            stretch = replace(stretch, end=following)
    if kind == 0:
        return None
    return stretch


def _rule(
    expr: CronExpr | str, zone: tzinfo, window: Window, due: datetime, following: datetime | None
) -> tuple[int, Stretch]:
    starting = first_starting(window, due, zone)
    if following is None or starting.start < following:
        return 1, starting
    inside = containing(window, due, zone)
    if inside is None:
        return 0, starting
    end = inside.end if following is None else min(inside.end, following)
    return 2, Stretch(due, end, window)


OPEN_FOR = timedelta(days=2)
"""No window is open longer than a day past its due's period: older dues need no look."""


def oldest_open(
    expr: CronExpr | str,
    zone: tzinfo,
    window: Window,
    last_due: datetime,
    due: datetime,
    now: datetime,
) -> datetime:
    """The due a windowed schedule fires when it wakes late over several dues: the oldest one
    after ``last_due`` whose stretch is still open at ``now`` (asleep past midnight, the night
    before is still there to use), else ``due``; the older ones are missed."""
    candidate = next_run(expr, max(last_due, now - OPEN_FOR), zone)
    while candidate is not None and candidate < due:
        stretch = served(expr, zone, window, candidate)
        if stretch is not None and now < stretch.end:
            return candidate
        candidate = next_run(expr, candidate, zone)
    return due


def upcoming_windows(
    expr: CronExpr | str, zone: tzinfo, window: Window, after: datetime, count: int
) -> list[tuple[datetime, Stretch]]:
    """The next ``count`` dues that serve a stretch, each with it: what ``preview`` lists."""
    found: list[tuple[datetime, Stretch]] = []
    due: datetime | None = after
    misses = 0
    while len(found) < count and due is not None and misses < 10_000:
        due = next_run(expr, due, zone)
        if due is None:
            break
        stretch = served(expr, zone, window, due)
        if stretch is None:
            misses += 1
            continue
        found.append((due, stretch))
    return found


# -- the gate inside a window ----------------------------------------------------------------------


def outside(window: Window) -> Unmet:
    return Unmet(Need.window, name=window.text)


def window_gate(
    conditions: Conditions,
    action_kind: str,
    state: SystemState,
    stretch: Stretch | None,
    now: datetime,
    last_success: datetime | None,
    said: str,
) -> Gate:
    """May a run whose due serves ``stretch`` start at ``now``? Before the window it waits for it;
    inside, the other conditions decide and the window's end is their deadline; after it, the run
    is skipped (or runs, ``at_window_end``) with ``said`` (``window_reason``) as its reason."""
    window = conditions.window
    assert window is not None
    if stretch is None:
        return Gate(Verdict.skip, (outside(window),), said=f"outside the window {window.text}")
    if now < stretch.start:
        return Gate(Verdict.wait, (outside(window),), until=stretch.start)
    if now >= stretch.end:
        if conditions.at_window_end is AtWindowEnd.run:
            return Gate(Verdict.run_anyway, said=f"ran at the window's end: {said}")
        return Gate(Verdict.skip, said=said)
    inner = replace(conditions, window=None, wait_at_most=None)
    verdict = gate(inner, action_kind, state, stretch.start, now, last_success)
    if verdict.verdict is Verdict.wait:
        until = stretch.end if verdict.until is None else min(verdict.until, stretch.end)
        return replace(verdict, until=until)
    return verdict


# -- what happened inside a window that saw no run --------------------------------------------------

_NEED_WORDS = {
    Need.network: "offline",
    Need.unmetered: "on a metered network",
    Need.charger: "on battery",
    Need.battery: "on low battery",
    Need.volume: "without its disk",
    Need.network_name: "not on its network",
    Need.path_exists: "without its path",
    Need.away: "you were at the computer",
}


@dataclass(frozen=True, slots=True)
class WindowTrack:
    """What the runtime saw of a waiting run's window: when it looked (spans of at most ``GAP``
    between looks are awake) and which needs were unmet when it did."""

    awake: tuple[tuple[datetime, datetime], ...] = ()
    needs: frozenset[Need] = frozenset()


GAP = timedelta(minutes=3)
"""Looks further apart than this (the runtime looks at least once a minute) mean it slept."""


def observe(track: WindowTrack, now: datetime, unmet: Iterable[Unmet]) -> WindowTrack:
    needs = track.needs | {item.need for item in unmet if item.need is not Need.window}
    spans = list(track.awake)
    if spans and timedelta(0) <= now - spans[-1][1] <= GAP:
        spans[-1] = (spans[-1][0], now)
    elif not spans or now > spans[-1][1]:
        spans.append((now, now))
    return WindowTrack(tuple(spans), frozenset(needs))


def sleeps_seen(track: WindowTrack, stretch: Stretch) -> list[tuple[datetime, datetime]]:
    """The stretches of the window no look saw: asleep, or the app was not running."""
    found: list[tuple[datetime, datetime]] = []
    cursor = stretch.start
    for start, end in track.awake:
        if start - cursor > GAP:
            found.append((cursor, start))
        cursor = max(cursor, end)
    if stretch.end - cursor > GAP:
        found.append((cursor, stretch.end))
    return found


def window_reason(
    stretch: Stretch,
    zone: tzinfo,
    sleeps: Sequence[tuple[datetime, datetime]],
    needs: Iterable[Need],
) -> str:
    """Why no moment of ``stretch`` qualified: the sleeps that touch it, as they were
    (``asleep 21:40-07:10``), then what was missing while awake (``on battery the rest of the
    window``)."""
    touching = sorted((a, b) for a, b in sleeps if a < stretch.end and b > stretch.start)
    parts = [f"asleep {_span_words(a, b, zone)}" for a, b in touching]
    cursor = stretch.start
    for a, b in touching:
        if a > cursor:
            break
        cursor = max(cursor, b)
    seen = set(needs)
    # Seen awake (a look is a moment, which sleeps on both sides may seem to cover) or not
    # covered by the sleeps: what was missing while awake.
    if cursor < stretch.end or seen:
        words = [_NEED_WORDS[need] for need in Need if need in seen and need in _NEED_WORDS]
        tail = "the rest of the window" if touching else "the whole window"
        parts.append(f"{join_words(words) or 'not looked at'} {tail}")
    return ", ".join(parts)


def _span_words(start: datetime, end: datetime, zone: tzinfo) -> str:
    a, b = start.astimezone(zone), end.astimezone(zone)
    shape = "%Y-%m-%d %H:%M" if end - start >= timedelta(days=1) else "%H:%M"
    return f"{a.strftime(shape)}-{b.strftime(shape)}"
