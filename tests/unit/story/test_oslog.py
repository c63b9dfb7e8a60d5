"""The OS's logs of sleeps, parsed from fixtures in each tool's real output format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.story import Sleep
from domi_desktop.story.oslog import parse_events_xml, parse_journal, parse_pmset

FIXTURES = Path(__file__).with_name("fixtures")
CET = timezone(timedelta(hours=1))
JOURNAL_SLEEPS = (
    Sleep(
        datetime(2026, 11, 30, 23, 10, 5, 412311, UTC), datetime(2026, 12, 1, 7, 2, 11, 80455, UTC)
    ),
    Sleep(datetime(2026, 12, 1, 12, 30, 0, 250000, UTC), datetime(2026, 12, 1, 13, 15, 42, 1, UTC)),
)
"""The two sleeps of fixtures/journal.jsonl that woke in the boot they began in."""


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_the_journal_gives_each_sleep_with_its_wake_of_the_same_boot() -> None:
    parsed = parse_journal(fixture("journal.jsonl"))

    assert parsed.sleeps == JOURNAL_SLEEPS
    # The line that is not JSON, the entry with no readable time, the sleep whose battery died
    # (its "wake" is the next boot's) and that boot's wake with no sleep: each noted, none raised.
    assert len(parsed.notes) == 4
    assert any("line 3" in note for note in parsed.notes)
    assert any("a wake with no sleep" in note for note in parsed.notes)


def test_pmset_ends_a_sleep_at_the_wake_not_at_a_dark_wake_and_drops_one_a_boot_cut_short() -> None:
    parsed = parse_pmset(fixture("pmset.log"))

    assert parsed.sleeps == (
        Sleep(
            datetime(2026, 11, 30, 23, 10, 12, tzinfo=CET),
            datetime(2026, 12, 1, 7, 2, 1, tzinfo=CET),
        ),
        Sleep(
            datetime(2026, 12, 1, 13, 45, tzinfo=CET), datetime(2026, 12, 1, 14, 20, 30, tzinfo=CET)
        ),
    )
    assert any("unreadable time" in note for note in parsed.notes)
    assert any("a wake with no sleep" in note for note in parsed.notes)  # after the fresh Start


def test_the_windows_event_log_pairs_kernel_power_42_with_the_next_107() -> None:
    parsed = parse_events_xml(fixture("kernel_power.xml"))

    assert parsed.sleeps == (
        Sleep(
            datetime(2026, 11, 30, 22, 10, 12, 95428, UTC),
            datetime(2026, 12, 1, 6, 2, 3, 461721, UTC),
        ),
    )
    assert any("unreadable" in note for note in parsed.notes)
    assert any("a wake with no sleep" in note for note in parsed.notes)


def test_text_that_is_not_xml_is_a_note() -> None:
    parsed = parse_events_xml("<Event><System>")
    assert parsed.sleeps == ()
    assert parsed.notes and "not XML" in parsed.notes[0]


@pytest.mark.parametrize("parse", [parse_journal, parse_pmset, parse_events_xml])
@given(text=st.text(max_size=400))
def test_no_text_makes_a_parser_raise(parse: object, text: str) -> None:
    parsed = parse(text)  # type: ignore[operator]
    assert all(sleep.end > sleep.start for sleep in parsed.sleeps)
