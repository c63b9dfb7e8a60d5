"""Counting fires in an interval, checked against walking them one by one with next_run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from domi_desktop.cron import next_run
from domi_desktop.cron._count import count_between, fires_before

EXPRESSIONS = [
    "* * * * *", "*/5 * * * *", "*/7 * * * *", "0 * * * *", "30 * * * *", "*/20 1-3 * * *",
    "0 9 * * 1-5", "30 2 * * *", "0,30 1,2 * * *", "15 1 * * *", "0 0 * * *", "0 0 13 * 5",
    "45 23 * * *", "*/15 0 * * *", "0 0 29 2 *",
]  # fmt: skip
ZONES = ["America/New_York", "Europe/Riga", "Australia/Lord_Howe", "Asia/Shanghai",
         "America/Sao_Paulo", "UTC"]  # fmt: skip
# Days with a transition in one of the zones above, and an ordinary one.
AROUND = [datetime(2024, 3, 10), datetime(2024, 11, 3), datetime(2024, 10, 5), datetime(2024, 4, 6),
          datetime(2018, 11, 4), datetime(2019, 2, 16), datetime(2024, 3, 31), datetime(2024, 10, 27),
          datetime(2024, 6, 1)]  # fmt: skip


def walked(expr: str, start: datetime, end: datetime, tz: str) -> list[datetime]:
    fires, cursor = [], start
    while True:
        cursor = next_run(expr, cursor, tz)  # type: ignore[assignment]
        if cursor is None or cursor >= end:
            return fires
        fires.append(cursor)


@settings(max_examples=700, deadline=None)
@given(
    expr=st.sampled_from(EXPRESSIONS),
    tz=st.sampled_from(ZONES),
    base=st.sampled_from(AROUND),
    offset=st.integers(-3000, 3000),
    length=st.integers(0, 5000),
    seconds=st.sampled_from([0, 0, 30]),
    from_a_fire=st.booleans(),
)
@example(
    expr="30 2 * * *",
    tz="America/New_York",
    base=datetime(2024, 3, 10),
    offset=0,
    length=1,
    seconds=0,
    from_a_fire=True,
)  # starts at the gap fire itself, 03:00 EDT
@example(
    expr="15 1 * * *",
    tz="America/New_York",
    base=datetime(2024, 11, 3),
    offset=360,
    length=16,
    seconds=0,
    from_a_fire=False,
)  # starts at the fall-back, inside the repeated 01:00-02:00 (01:15 ran in the first copy)
def test_counting_agrees_with_walking_across_dst(
    expr: str, tz: str, base: datetime, offset: int, length: int, seconds: int, from_a_fire: bool
) -> None:
    start = base.replace(tzinfo=UTC) + timedelta(minutes=offset, seconds=seconds)
    if from_a_fire:
        start = next_run(expr, start, tz).astimezone(UTC)  # type: ignore[union-attr]
    end = start + timedelta(minutes=length)
    assert count_between(expr, start, end, tz) == len(walked(expr, start, end, tz))


def test_two_weeks_of_every_minute_is_20159_missed() -> None:
    start = datetime(2024, 6, 1, tzinfo=UTC)
    assert (
        count_between("* * * * *", start, start + timedelta(days=14), "America/New_York") == 20_159
    )


def test_a_year_of_every_minute_across_both_dst_changes() -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    end = datetime(2025, 1, 1, tzinfo=UTC)
    # Wildcard jobs follow the wall clock: an hour lost in March, one gained in November.
    assert count_between("* * * * *", start, end, "America/New_York") == 366 * 1440 - 1
    assert count_between("0 * * * *", start, end, "America/New_York") == 366 * 24 - 1


def test_fires_before_lists_the_latest_oldest_first() -> None:
    end = datetime(2024, 6, 5, 9, 0, tzinfo=UTC)
    listed = fires_before("0 9 * * *", end, "UTC", after=datetime(2024, 5, 1, tzinfo=UTC), limit=3)
    assert listed == [datetime(2024, 6, d, 9, 0, tzinfo=UTC) for d in (2, 3, 4)]
    assert fires_before(
        "0 9 * * *", end, "UTC", after=datetime(2024, 6, 3, 9, tzinfo=UTC), limit=9
    ) == [datetime(2024, 6, 4, 9, 0, tzinfo=UTC)]
