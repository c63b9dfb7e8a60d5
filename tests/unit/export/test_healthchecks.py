"""The schedule and zone sent to Healthchecks: evaluated by cronsim (what Healthchecks runs), they
expect a ping at every instant domi fires, and at no other."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim

from domi_desktop.cron import CronError, next_run, parse
from domi_desktop.export import ExportError, healthchecks_check

ZONES = ("America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata", "UTC")
"""A US and a European DST rule, a southern-hemisphere one, a half-hour offset, and none at all.

Not here: zones whose DST shift is 30 minutes (Australia/Lord_Howe) or falls at midnight
(America/Santiago), where cronsim itself disagrees with Debian's rule (it expects '* 15 * * *'
at 15:30 on Lord Howe's change day, and skips 02:53 of its 02:00-02:30 gap):
``test_zones_where_cronsim_parts_from_debian`` records them."""

EXPRESSIONS = 10_000
FIRES = 4


def _cronsim_next(schedule: str, tz: str, after: datetime, count: int) -> list[datetime]:
    found = []
    sim = CronSim(schedule, after.astimezone(ZoneInfo(tz)))
    for _ in range(count):
        try:
            found.append(next(sim).astimezone(UTC))
        except StopIteration:
            break
    return found


def _domi_next(expr: str, tz: str, after: datetime, count: int) -> list[datetime]:
    parsed, found, at = parse(expr), [], after
    for _ in range(count):
        following = next_run(parsed, at, tz)
        if following is None:
            break
        found.append(following.astimezone(UTC))
        at = following
    return found


_NAMES_MONTH = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NAMES_DAY = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _item(rng: random.Random, lo: int, hi: int, names: tuple[str, ...] | None) -> str:
    def value() -> str:
        number = rng.randint(lo, hi)
        if names is not None and rng.random() < 0.3 and number - lo < len(names):
            return names[number - lo]
        return str(number)

    kind = rng.random()
    if kind < 0.35:
        return value()
    if kind < 0.6:
        a, b = sorted(rng.sample(range(lo, hi + 1), 2))
        step = f"/{rng.randint(1, hi - lo + 3)}" if rng.random() < 0.3 else ""
        return f"{a}-{b}{step}"
    if kind < 0.8:
        return f"*/{rng.randint(1, hi - lo + 2)}"
    return f"{value()}/{rng.randint(1, hi - lo + 2)}"


def _field(rng: random.Random, lo: int, hi: int, names: tuple[str, ...] | None = None) -> str:
    roll = rng.random()
    if roll < 0.3:
        return "*"
    items = [_item(rng, lo, hi, names) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
    return ",".join(items)


def random_expression(rng: random.Random) -> str:
    if rng.random() < 0.03:
        return rng.choice(("@hourly", "@daily", "@weekly", "@monthly", "@yearly"))
    # Mostly fixed times, some wildcards: both DST classes are met.
    minute = _field(rng, 0, 59) if rng.random() < 0.5 else str(rng.randint(0, 59))
    hour = _field(rng, 0, 23)
    return " ".join(
        (minute, hour, _field(rng, 1, 31), _field(rng, 1, 12, _NAMES_MONTH),
         _field(rng, 0, 7, _NAMES_DAY))
    )  # fmt: skip


def _start(rng: random.Random, tz: str) -> datetime:
    """A random instant, half of them a day or two before a DST change of the zone."""
    base = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 6 * 365 * 86400))
    if tz != "UTC" and rng.random() < 0.5:
        zone, probe = ZoneInfo(tz), base
        offset = probe.astimezone(zone).utcoffset()
        while probe.astimezone(zone).utcoffset() == offset and probe < base + timedelta(days=400):
            probe += timedelta(hours=6)
        base = probe - timedelta(hours=rng.randint(1, 60))
    return base


@pytest.mark.slow  # 50,000 comparisons; make test runs it, make test-fast does not
def test_the_schedule_sent_expects_exactly_domis_fires_for_10000_expressions_in_5_zones() -> None:
    rng = random.Random(24)
    compared = refused = 0
    mismatches: list[str] = []
    reasons: set[str] = set()
    while compared + refused < EXPRESSIONS:
        text = random_expression(rng)
        try:
            parse(text)
        except CronError:
            continue
        tz = ZONES[(compared + refused) % len(ZONES)]
        try:
            schedule, zone = healthchecks_check(text, tz, "UTC")
        except ExportError as error:
            refused += 1
            reasons.add(str(error).split(";")[0])
            continue
        compared += 1
        assert zone == tz
        assert len(schedule) <= 100
        after = _start(rng, tz)
        ours = _domi_next(text, tz, after, FIRES)
        theirs = _cronsim_next(schedule, tz, after, len(ours))
        if ours != theirs:
            mismatches.append(f"{text!r} -> {schedule!r} in {tz} after {after}: {ours} / {theirs}")
    print(f"compared {compared}, refused {refused} ({sorted(reasons)})")
    assert mismatches == []
    # Only schedules longer than Healthchecks' column are refused.
    assert refused < EXPRESSIONS // 100


@pytest.mark.parametrize(
    ("expr", "sent"),
    [
        ("0 9 * * mon-fri", "0 9 * * 1-5"),
        ("@daily", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        ("*/15 * * * *", "*/15 * * * *"),
        # Vixie's OR: neither day field may start with '*'.
        ("0 0 1,15 * 1", "0 0 1,15 * 1"),
        # AND because domi's day of month started with '*': it still does.
        ("0 0 */2 * 1", "0 0 */2 * 1"),
        # A full list is not '*': 0-59 stays fixed-time, and OR with every day is every day
        # for cronsim as for domi.
        ("0-59 3 1-31 * 1", "0-59 3 1-31 * 1"),
        # mon-sun is Monday through Sunday; 7 is Sunday.
        ("0 12 * * mon-sun", "0 12 * * 0-6"),
        ("0 12 * * 7", "0 12 * * 0"),
        # A wildcard job stays one (its minutes start at 0), so DST days agree.
        ("*/7,3 1 * * *", "*/60,3,7,14,21,28,35,42,49,56 1 * * *"),
    ],
)
def test_it_writes_the_fields_so_cronsim_reads_the_same_rules(expr: str, sent: str) -> None:
    assert healthchecks_check(expr, "Europe/Berlin", "UTC") == (sent, "Europe/Berlin")


def test_local_is_the_machines_zone_when_sent() -> None:
    assert healthchecks_check("0 9 * * *", "local", "Asia/Tokyo") == ("0 9 * * *", "Asia/Tokyo")


def test_a_zone_without_an_iana_name_is_refused_with_the_reason() -> None:
    with pytest.raises(ExportError, match="IANA zone"):
        healthchecks_check("0 9 * * *", "local", "local")


def test_a_schedule_longer_than_healthchecks_holds_is_refused_with_the_reason() -> None:
    minutes = "1,4,6,9,11,14,16,19,21,24,26,29,31,34,36,39,41,44,46,49,51,54,56,59"
    days = "1,3,4,7,9,10,13,15,16,19,21,22,25,27,28,31"
    with pytest.raises(ExportError, match="at most 100 characters"):
        healthchecks_check(f"{minutes} 1,5,9 {days} * *", "UTC", "UTC")


def test_bad_cron_is_an_export_error_not_a_crash() -> None:
    with pytest.raises(ExportError, match="minute"):
        healthchecks_check("61 * * * *", "UTC", "UTC")


@pytest.mark.parametrize(
    ("expr", "tz", "after"),
    [
        ("* 15 * * *", "Australia/Lord_Howe", datetime(2026, 4, 4, 12, tzinfo=UTC)),
        ("53 * * * *", "Australia/Lord_Howe", datetime(2026, 4, 4, 12, tzinfo=UTC)),
        ("0 */24 * 9 0", "America/Santiago", datetime(2026, 1, 1, tzinfo=UTC)),
    ],
)
def test_zones_where_cronsim_parts_from_debian(expr: str, tz: str, after: datetime) -> None:
    """What Healthchecks itself evaluates differently on DST days in two rare zones: the sent
    schedule is right, Healthchecks' reading of it is not (cronsim 2.8). Should cronsim change,
    this test fails and the zones join the property test above."""
    schedule, _ = healthchecks_check(expr, tz, "UTC")
    assert _domi_next(expr, tz, after, 4) != _cronsim_next(schedule, tz, after, 4)
