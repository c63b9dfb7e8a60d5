"""upcoming: the fires after an instant, lazily, as next_run gives them one by one."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import islice
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import next_run, set_local_resolver, upcoming


def test_it_gives_the_fires_next_run_gives_across_a_dst_change() -> None:
    # New York falls back at 2024-11-03 06:00 UTC: 01:30 happens twice.
    after = datetime(2024, 11, 2, 23, 0, tzinfo=ZoneInfo("America/New_York"))
    fires = list(islice(upcoming("30 * * * *", after, "America/New_York"), 6))
    expected = []
    cursor = after
    for _ in range(6):
        found = next_run("30 * * * *", cursor, "America/New_York")
        assert found is not None
        expected.append(found)
        cursor = found
    assert fires == expected
    assert [fire.strftime("%H:%M%z") for fire in fires[2:4]] == ["01:30-0400", "01:30-0500"]


def test_it_ends_where_the_calendar_ends() -> None:
    after = datetime(9997, 6, 1, tzinfo=UTC)
    assert [fire.year for fire in upcoming("0 0 1 1 *", after, "UTC")] == [9998, 9999]


def test_it_resolves_local_once_for_the_whole_sequence() -> None:
    asked: list[str] = []

    def resolver() -> ZoneInfo:
        asked.append("asked")
        return ZoneInfo("Asia/Shanghai")

    set_local_resolver(resolver)
    fires = list(islice(upcoming("0 9 * * *", datetime(2024, 6, 1, tzinfo=UTC), "local"), 5))
    assert asked == ["asked"]
    assert fires[0].isoformat() == "2024-06-01T09:00:00+08:00"


def test_it_refuses_a_naive_start_and_a_bad_expression_at_once() -> None:
    with pytest.raises(ValueError, match="aware"):
        upcoming("* * * * *", datetime(2024, 1, 1), "UTC")
    with pytest.raises(ValueError, match="minute"):
        upcoming("61 * * * *", datetime(2024, 1, 1, tzinfo=UTC), "UTC")
