"""The systemd side of the check: random cron expressions, and ``systemd-analyze calendar`` run on
many ``OnCalendar=`` values per call, its output parsed back to instants."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from domi_desktop.cron import CronExpr, next_run, parse
from domi_desktop.export._dst import meeting, shifts
from domi_desktop.export._systemd import on_calendar
from domi_desktop.model import LOCAL_ZONE

ZONES = ("UTC", "America/New_York", "Europe/Riga", "Australia/Lord_Howe", "Asia/Shanghai")
ITERATIONS = 50
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
_ELAPSE = re.compile(r"(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")
_IN_UTC = re.compile(r"\(in UTC\): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")
_NAMES_M = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NAMES_D = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def random_field(rng: random.Random, low: int, high: int, names: tuple[str, ...] = ()) -> str:
    def value(v: int) -> str:
        if names and rng.random() < 0.3 and v - low < len(names):
            return names[v - low]
        return str(v)

    def element() -> str:
        kind = rng.random()
        if kind < 0.3:
            return value(rng.randint(low, high))
        if kind < 0.55:
            a = rng.randint(low, high)
            return f"{value(a)}-{value(rng.randint(a, high))}"
        if kind < 0.75:
            return f"*/{rng.randint(1, high - low + 1)}"
        if kind < 0.9:
            a = rng.randint(low, high)
            return f"{value(a)}-{value(rng.randint(a, high))}/{rng.randint(1, high - low + 1)}"
        return f"{rng.randint(low, high)}/{rng.randint(1, high - low + 1)}"

    if rng.random() < 0.35:
        return "*"
    return ",".join(element() for _ in range(rng.choice((1, 1, 1, 2, 3))))


def random_expression(rng: random.Random) -> CronExpr:
    """A random expression domi accepts (rejected ones, e.g. Feb 30, are drawn again)."""
    while True:
        if rng.random() < 0.04:
            text = rng.choice(("@hourly", "@daily", "@weekly", "@monthly", "@yearly"))
        else:
            text = " ".join(
                (
                    random_field(rng, 0, 59),
                    random_field(rng, 0, 23),
                    random_field(rng, 1, 31),
                    random_field(rng, 1, 12, _NAMES_M),
                    random_field(rng, 0, 7, _NAMES_D),
                )
            )
        try:
            return parse(text)
        except ValueError:
            continue


def domi_fires(expr: CronExpr, zone: str, base: datetime, count: int) -> list[datetime]:
    fires: list[datetime] = []
    at: datetime | None = base
    while at is not None and len(fires) < count:
        at = next_run(expr, at, zone)
        if at is not None:
            fires.append(at.astimezone(UTC))
    return fires


def systemd_elapses(specs: list[str], base: datetime, tz: str = "UTC") -> list[list[datetime]]:
    """The next ``ITERATIONS`` elapses of each spec after ``base``, by systemd-analyze running
    in the zone ``tz`` (what a spec without a zone is read in)."""
    assert SYSTEMD_ANALYZE is not None
    result = subprocess.run(
        [
            SYSTEMD_ANALYZE,
            "calendar",
            f"--iterations={ITERATIONS}",
            f"--base-time={base:%Y-%m-%d %H:%M:%S} UTC",
            *specs,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": tz, "SYSTEMD_COLORS": "0", "SYSTEMD_PAGER": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("Normalized form:")[1:]
    assert len(blocks) == len(specs), result.stdout[:2000]
    # Outside UTC each elapse is printed in local time, then again "(in UTC)".
    pattern = _ELAPSE if tz == "UTC" else _IN_UTC
    return [
        [datetime.fromisoformat(m).replace(tzinfo=UTC) for m in pattern.findall(block)]
        for block in blocks
    ]


@dataclass
class Case:
    expr: CronExpr
    zone: str
    base: datetime
    specs: tuple[str, ...]
    run_in: str
    """The zone systemd-analyze runs in: UTC for specs that name their zone; the zone itself
    for zone-less specs (the same computation without a fork per elapse: 70 times faster)."""


def transition_days(zone: str) -> set[tuple[int, int, int]]:
    """Local dates (and the day after, for folds that end past midnight) of the zone's shifts."""
    days = set()
    for shift in shifts(ZoneInfo(zone)):
        for wall in shift.minutes[:1] + shift.minutes[-1:]:
            for extra in (0, 1):
                day = wall + timedelta(days=extra)
                days.add((day.year, day.month, day.day))
    return days


def compare(cases: list[Case], batch: int = 400) -> tuple[int, list[str]]:
    """Check every case; returns (cases checked, failures described)."""
    failures: list[str] = []
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        by_base: dict[tuple[datetime, str], list[Case]] = {}
        for case in chunk:
            by_base.setdefault((case.base, case.run_in), []).append(case)
        for (base, run_in), group in by_base.items():
            specs = [spec for case in group for spec in case.specs]
            elapses = iter(systemd_elapses(specs, base, run_in))
            for case in group:
                theirs = sorted({at for _ in case.specs for at in next(elapses)})[:ITERATIONS]
                problem = _check(case, theirs)
                if problem:
                    failures.append(problem)
    return len(cases), failures


def _check(case: Case, theirs: list[datetime]) -> str | None:
    ours = domi_fires(case.expr, case.zone, case.base, ITERATIONS)
    if ours == theirs:
        return None
    horizon = min(ours[-1] if ours else case.base, theirs[-1] if theirs else case.base)
    if len(ours) < ITERATIONS or len(theirs) < ITERATIONS:
        horizon = max(ours[-1:] + theirs[-1:], default=case.base)
    met = meeting(case.expr, ZoneInfo(case.zone))
    differs = {at for at in set(ours) ^ set(theirs) if at <= horizon}
    if not differs:
        return None
    zone = ZoneInfo(case.zone)
    days = transition_days(case.zone)
    off_dst = sorted(
        at
        for at in differs
        if (at.astimezone(zone).year, at.astimezone(zone).month, at.astimezone(zone).day)
        not in days
    )
    reported = met.gap_example is not None or met.fold_example is not None
    if off_dst or not reported:
        return (
            f"{case.expr.text!r} in {case.zone} after {case.base:%Y-%m-%d %H:%M} UTC "
            f"{list(case.specs)}: differ at {sorted(differs)[:4]} "
            f"(off DST days: {off_dst[:4]}, export names a DST difference: {reported})"
        )
    return None


def cases(count: int, seed: int, *, named: bool) -> list[Case]:
    """``named``: the specs as exported (zone in the spec); else zone-less, run in the zone."""
    rng = random.Random(seed)
    out = []
    start = datetime(2024, 1, 1, tzinfo=UTC)
    base = start
    for index in range(count):
        expr = random_expression(rng)
        if index % 10 == 0:
            # A shared base per ten expressions keeps many specs in one systemd-analyze call.
            base = start + timedelta(minutes=rng.randrange(6 * 365 * 24 * 60))
        for zone in ZONES:
            if named:
                out.append(Case(expr, zone, base, on_calendar(expr, zone), "UTC"))
            else:
                out.append(Case(expr, zone, base, on_calendar(expr, LOCAL_ZONE), zone))
    return out
