"""The skipped instants of a catch-up, listed by arithmetic for hourly expressions: the same
instants as walking ``prev_run`` back, in every kind of zone and across DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.cron import parse, zone_for
from domi_desktop.cron._count import count_between, fires_before
from domi_desktop.scheduler.decide import MAX_LISTED_SKIPS, _hourly_fires

EXPRS = ("* * * * *", "*/5 * * * *", "7 * * * *", "0,30 * * * *", "59 * * * *")
ZONES = ("UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe")
ENDS = (
    datetime(2024, 6, 5, 12, 0, 0, tzinfo=UTC),
    datetime(2024, 11, 3, 6, 30, 0, tzinfo=UTC),  # just after New York falls back
    datetime(2024, 3, 10, 7, 5, 0, tzinfo=UTC),  # just after New York springs forward
    datetime(2024, 4, 7, 0, 1, 0, tzinfo=UTC),  # Lord Howe's half-hour change
)


@pytest.mark.parametrize("text", EXPRS)
@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("end", ENDS)
@pytest.mark.parametrize("asleep", [timedelta(hours=3), timedelta(days=3)])
def test_it_lists_the_same_instants_as_walking_back(
    text: str, tz: str, end: datetime, asleep: timedelta
) -> None:
    expr, zone = parse(text), zone_for(tz)
    after = end - asleep
    limit = min(count_between(expr, after, end, zone), MAX_LISTED_SKIPS)
    quick = _hourly_fires(expr, zone, after, end, limit)
    walked = tuple(
        moment.astimezone(UTC) for moment in fires_before(expr, end, zone, after=after, limit=limit)
    )
    if quick is not None:
        assert quick == walked
    assert len(walked) == limit


def test_it_is_used_for_every_minute_in_utc() -> None:
    end = datetime(2024, 6, 5, 12, 0, 30, tzinfo=UTC)
    listed = _hourly_fires(parse("* * * * *"), UTC, end - timedelta(minutes=3), end, 100)
    assert listed == (
        datetime(2024, 6, 5, 11, 58, tzinfo=UTC),
        datetime(2024, 6, 5, 11, 59, tzinfo=UTC),
        datetime(2024, 6, 5, 12, 0, tzinfo=UTC),
    )


def test_it_leaves_other_expressions_to_prev_run() -> None:
    end = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)
    assert _hourly_fires(parse("0 9 * * *"), UTC, end - timedelta(days=9), end, 100) is None
