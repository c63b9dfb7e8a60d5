"""The window decision against a brute-force oracle: a year of nights, minute by minute.

For each zone a year of random sleep and charger spans is laid out in UTC minutes. The oracle
knows nothing of the core: a minute belongs to a night's window when the zone's wall clock reads
a time inside the window's hours (a window from one night, one stretch of real time from its first
such minute to its last). A night's run is its first awake minute on mains; a night with none is
skipped, saying the sleeps that touch it and "on battery" for the rest.

The core is driven as the runtime drives it: at every awake minute each due fires (every due since
the last, for a windowed schedule), and each waiting run is gated by ``window_gate``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import next_run, parse, prev_run
from domi_desktop.model import Conditions, SystemState, Window
from domi_desktop.scheduler.conditions import Verdict
from domi_desktop.scheduler.window import (
    Stretch,
    WindowTrack,
    observe,
    served,
    window_gate,
    window_reason,
)

MINUTE = timedelta(minutes=1)
YEAR = 2026
CASES = [
    # zone, window: crossing midnight, edges inside DST gaps and folds, a 30-minute DST.
    ("America/New_York", Window(time(22, 0), time(6, 0))),
    ("Europe/Berlin", Window(time(2, 30), time(5, 0))),
    ("Australia/Sydney", Window(time(23, 30), time(2, 30))),
    ("Australia/Lord_Howe", Window(time(1, 45), time(3, 0))),
    ("Asia/Kolkata", Window(time(21, 15), time(4, 45))),
]


def spans(rng: random.Random, start: datetime, end: datetime, on: tuple[int, int],
          off: tuple[int, int]) -> list[tuple[datetime, datetime]]:  # fmt: skip
    """Random ``[a, b)`` spans of minutes (``on`` long, ``off`` apart), never touching."""
    found: list[tuple[datetime, datetime]] = []
    cursor = start + MINUTE * rng.randint(0, off[1])
    while cursor < end:
        length = MINUTE * rng.randint(*on)
        found.append((cursor, cursor + length))
        cursor += length + MINUTE * rng.randint(*off)
    return found


def covered(minutes: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> set[int]:
    """The minutes (as indices from ``start``) inside the spans."""
    found: set[int] = set()
    for a, b in minutes:
        lo = max(0, int((a - start) / MINUTE))
        hi = min(int((end - start) / MINUTE), int((b - start) / MINUTE))
        found.update(range(lo, hi))
    return found


@dataclass
class Night:
    minutes: list[int] = field(default_factory=list)


def oracle_nights(zone: tzinfo, window: Window, start: datetime, count: int) -> dict[date, Night]:
    nights: dict[date, Night] = {}
    crossing = window.end <= window.start
    for index in range(count):
        wall = (start + index * MINUTE).astimezone(zone)
        t = wall.time().replace(tzinfo=None)
        if crossing:
            if t >= window.start:
                key = wall.date()
            elif t < window.end:
                key = wall.date() - timedelta(days=1)
            else:
                continue
        elif window.start <= t < window.end:
            key = wall.date()
        else:
            continue
        nights.setdefault(key, Night()).minutes.append(index)
    return nights


def hm(a: datetime, b: datetime, zone: tzinfo) -> str:
    shape = "%Y-%m-%d %H:%M" if b - a >= timedelta(days=1) else "%H:%M"
    return f"{a.astimezone(zone).strftime(shape)}-{b.astimezone(zone).strftime(shape)}"


@pytest.mark.parametrize(("zone_name", "window"), CASES, ids=[case[0] for case in CASES])
def test_a_year_of_nights_gives_the_oracles_outcome_night_by_night(
    zone_name: str, window: Window
) -> None:
    zone = ZoneInfo(zone_name)
    rng = random.Random(f"{zone_name}-{window.text}")
    start = datetime(YEAR - 1, 12, 30, tzinfo=UTC)
    end = datetime(YEAR + 1, 1, 3, tzinfo=UTC)
    count = int((end - start) / MINUTE)
    # Nights asleep from minutes to two days; the charger on and off for hours.
    sleeps = spans(rng, start, end, on=(5, 40 * 60), off=(10, 20 * 60))
    chargers = spans(rng, start, end, on=(10, 10 * 60), off=(10, 8 * 60))
    asleep = covered(sleeps, start, end)
    mains = covered(chargers, start, end)

    # -- the oracle ------------------------------------------------------------------------------
    expected: dict[date, tuple[str, datetime | str]] = {}
    for key, night in oracle_nights(zone, window, start, count).items():
        if key.year != YEAR:
            continue
        first, last = night.minutes[0], night.minutes[-1]
        hull_start, hull_end = start + first * MINUTE, start + (last + 1) * MINUTE
        good = [m for m in range(first, last + 1) if m not in asleep and m in mains]
        if good:
            expected[key] = ("ran", start + good[0] * MINUTE)
            continue
        touching = [(a, b) for a, b in sleeps if a < hull_end and b > hull_start]
        parts = [f"asleep {hm(a, b, zone)}" for a, b in touching]
        if any(m not in asleep for m in range(first, last + 1)):
            parts.append(
                "on battery " + ("the rest of the" if touching else "the whole") + " window"
            )
        expected[key] = ("skipped", ", ".join(parts))

    # -- the core, driven minute by minute as the runtime does -----------------------------------
    expr = parse("@daily")
    conditions = Conditions(on_ac_power=True, window=window)
    last_due = prev_run(expr, datetime(YEAR - 1, 12, 31, 12, tzinfo=zone), zone)
    assert last_due is not None
    held: dict[datetime, tuple[Stretch | None, WindowTrack]] = {}
    outcomes: dict[date, list[tuple[str, datetime | str]]] = {}
    outside = 0
    for index in range(count):
        if index in asleep:
            continue
        now = start + index * MINUTE
        due = prev_run(expr, now, zone)
        assert due is not None
        while last_due < due:
            nxt = next_run(expr, last_due, zone)
            assert nxt is not None
            held[nxt] = (served(expr, zone, window, nxt), WindowTrack())
            last_due = nxt
        state = SystemState(on_ac=index in mains)
        for held_due, (stretch, track) in sorted(held.items()):
            said = ""
            if stretch is not None and now >= stretch.end:
                said = window_reason(stretch, zone, sleeps, track.needs)
            verdict = window_gate(conditions, "command", state, stretch, now, None, said)
            if stretch is None:
                outside += 1
                del held[held_due]
                continue
            key = stretch.start.astimezone(zone).date()
            if verdict.verdict is Verdict.wait:
                if stretch.holds(now):
                    held[held_due] = (stretch, observe(track, now, verdict.unmet))
                continue
            del held[held_due]
            if verdict.verdict is Verdict.run:
                assert stretch.holds(now), f"a run outside its window at {now}"
                outcomes.setdefault(key, []).append(("ran", now))
            else:
                assert verdict.verdict is Verdict.skip
                outcomes.setdefault(key, []).append(("skipped", verdict.reason or ""))

    assert outside == 0
    for key, want in sorted(expected.items()):
        got = outcomes.get(key, [])
        assert got == [want], f"night of {key}: {got} != {want}"
    ran = sum(1 for kind, _ in expected.values() if kind == "ran")
    assert 0 < ran < len(expected), "the random year had both kinds of nights"
    assert len(expected) == 365
