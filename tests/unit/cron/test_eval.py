"""next_run / prev_run on real zones, with the real transition instants in comments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim, CronSimError
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from domi_desktop.cron import next_run, parse, prev_run

NY = "America/New_York"
RIGA = "Europe/Riga"
LORD_HOWE = "Australia/Lord_Howe"
SHANGHAI = "Asia/Shanghai"
SAO_PAULO = "America/Sao_Paulo"
ZONES = [NY, RIGA, LORD_HOWE, SHANGHAI, SAO_PAULO, "UTC"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def local(zone: str, *fields: int, fold: int = 0) -> datetime:
    return datetime(*fields, tzinfo=ZoneInfo(zone), fold=fold)  # type: ignore[misc]


def run_iso(expr: str, after: datetime, tz: str, count: int) -> list[str]:
    fires, cursor = [], after
    for _ in range(count):
        nxt = next_run(expr, cursor, tz)
        assert nxt is not None
        fires.append(nxt.isoformat())
        cursor = nxt
    return fires


def test_next_run_is_strictly_after_the_argument() -> None:
    assert next_run("*/5 * * * *", at("2024-01-01T10:02:00+00:00"), "UTC") == at(
        "2024-01-01T10:05:00+00:00"
    )
    assert next_run("*/5 * * * *", at("2024-01-01T10:05:00+00:00"), "UTC") == at(
        "2024-01-01T10:10:00+00:00"
    )
    assert next_run("*/5 * * * *", at("2024-01-01T10:04:59.999999+00:00"), "UTC") == at(
        "2024-01-01T10:05:00+00:00"
    )


def test_prev_run_is_at_or_before_the_argument() -> None:
    assert prev_run("*/5 * * * *", at("2024-01-01T10:05:00+00:00"), "UTC") == at(
        "2024-01-01T10:05:00+00:00"
    )
    assert prev_run("*/5 * * * *", at("2024-01-01T10:04:59.999999+00:00"), "UTC") == at(
        "2024-01-01T10:00:00+00:00"
    )


def test_results_are_in_the_schedules_zone_whatever_the_arguments_zone() -> None:
    fire = next_run("0 9 * * *", at("2024-06-01T00:00:00+00:00"), SHANGHAI)
    assert fire is not None
    assert fire.tzinfo == ZoneInfo(SHANGHAI)
    assert fire.isoformat() == "2024-06-01T09:00:00+08:00"
    back = prev_run("0 9 * * *", at("2024-06-01T00:00:00+00:00"), ZoneInfo(SHANGHAI))
    assert back is not None
    assert back.isoformat() == "2024-05-31T09:00:00+08:00"


def test_the_issues_new_york_example_fires_at_3_on_the_spring_forward_day() -> None:
    # 2024-03-10 02:00 EST -> 03:00 EDT (07:00 UTC): 02:30 does not exist that day.
    after = at("2024-03-09T12:00:00-05:00")
    assert run_iso("30 2 * * *", after, NY, 3) == [
        "2024-03-10T03:00:00-04:00",
        "2024-03-11T02:30:00-04:00",
        "2024-03-12T02:30:00-04:00",
    ]


def test_fixed_time_jobs_in_a_gap_fire_once_at_the_end_of_the_gap() -> None:
    after = local(NY, 2024, 3, 10, 1, 0)
    assert run_iso("0,30 2 * * *", after, NY, 2) == [
        "2024-03-10T03:00:00-04:00",
        "2024-03-11T02:00:00-04:00",
    ]


def test_wildcard_jobs_skip_wall_times_that_do_not_exist() -> None:
    after = local(NY, 2024, 3, 10, 1, 45)
    assert run_iso("30 * * * *", after, NY, 2) == [
        "2024-03-10T03:30:00-04:00",
        "2024-03-10T04:30:00-04:00",
    ]
    assert run_iso("*/15 2 * * *", after, NY, 1) == ["2024-03-11T02:00:00-04:00"]


def test_wildcard_jobs_fire_in_both_copies_of_a_repeated_hour() -> None:
    # 2024-11-03 02:00 EDT -> 01:00 EST (06:00 UTC): 01:00-01:59 happens twice.
    after = local(NY, 2024, 11, 3, 0, 45)
    assert run_iso("*/30 * * * *", after, NY, 5) == [
        "2024-11-03T01:00:00-04:00",
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T02:00:00-05:00",
    ]


def test_fixed_time_jobs_fire_once_in_a_repeated_hour_at_the_first_copy() -> None:
    after = local(NY, 2024, 11, 3, 0, 45)
    assert run_iso("30 1 * * *", after, NY, 2) == [
        "2024-11-03T01:30:00-04:00",
        "2024-11-04T01:30:00-05:00",
    ]


def test_an_argument_in_the_second_copy_of_the_hour_moves_strictly_forward() -> None:
    second_copy = local(NY, 2024, 11, 3, 1, 10, fold=1)
    assert second_copy.utcoffset() == timedelta(hours=-5)
    wildcard = next_run("*/30 * * * *", second_copy, NY)
    fixed = next_run("30 1 * * *", second_copy, NY)
    assert wildcard is not None and fixed is not None
    assert wildcard.isoformat() == "2024-11-03T01:30:00-05:00"
    assert fixed.isoformat() == "2024-11-04T01:30:00-05:00"


def test_prev_run_in_the_second_copy_finds_later_wall_times_of_the_first_copy() -> None:
    second_copy = local(NY, 2024, 11, 3, 1, 10, fold=1)
    fixed = prev_run("45 1 * * *", second_copy, NY)
    wildcard = prev_run("45 * * * *", second_copy, NY)
    same_copy = prev_run("*/5 * * * *", second_copy, NY)
    assert fixed is not None and wildcard is not None and same_copy is not None
    assert fixed.isoformat() == "2024-11-03T01:45:00-04:00"
    assert wildcard.isoformat() == "2024-11-03T01:45:00-04:00"
    assert same_copy.isoformat() == "2024-11-03T01:10:00-05:00"
    assert same_copy.fold == 1


def test_lord_howe_half_hour_transitions() -> None:
    # 2024-10-06 02:00 +10:30 -> 02:30 +11:00 (15:30 UTC on the 5th).
    spring = local(LORD_HOWE, 2024, 10, 6, 1, 0)
    assert run_iso("15 2 * * *", spring, LORD_HOWE, 1) == ["2024-10-06T02:30:00+11:00"]
    assert run_iso("15 * * * *", spring, LORD_HOWE, 2) == [
        "2024-10-06T01:15:00+10:30",
        "2024-10-06T03:15:00+11:00",
    ]
    # 2024-04-07 02:00 +11:00 -> 01:30 +10:30 (15:00 UTC on the 6th): 01:30-01:59 twice.
    autumn = local(LORD_HOWE, 2024, 4, 7, 1, 20)
    assert run_iso("*/15 * * * *", autumn, LORD_HOWE, 5) == [
        "2024-04-07T01:30:00+11:00",
        "2024-04-07T01:45:00+11:00",
        "2024-04-07T01:30:00+10:30",
        "2024-04-07T01:45:00+10:30",
        "2024-04-07T02:00:00+10:30",
    ]
    assert run_iso("45 1 * * *", autumn, LORD_HOWE, 2) == [
        "2024-04-07T01:45:00+11:00",
        "2024-04-08T01:45:00+10:30",
    ]


def test_sao_paulo_2018_midnight_that_never_happened() -> None:
    # 2018-11-04 00:00 -03:00 -> 01:00 -02:00 (03:00 UTC): that day has no midnight.
    after = local(SAO_PAULO, 2018, 11, 3, 23, 45)
    assert run_iso("0 0 * * *", after, SAO_PAULO, 2) == [
        "2018-11-04T01:00:00-02:00",
        "2018-11-05T00:00:00-02:00",
    ]
    assert run_iso("@daily", after, SAO_PAULO, 1) == ["2018-11-04T01:00:00-02:00"]
    assert run_iso("*/30 * * * *", after, SAO_PAULO, 2) == [
        "2018-11-04T01:00:00-02:00",
        "2018-11-04T01:30:00-02:00",
    ]
    # 2019-02-17 00:00 -02:00 -> 2019-02-16 23:00 -03:00 (02:00 UTC): 23:00-23:59 twice.
    autumn = local(SAO_PAULO, 2019, 2, 16, 22, 0)
    assert run_iso("30 23 * * *", autumn, SAO_PAULO, 2) == [
        "2019-02-16T23:30:00-02:00",
        "2019-02-17T23:30:00-03:00",
    ]
    assert run_iso("30 23 * * *", autumn, SAO_PAULO, 1) == run_iso(
        "30 23 * * *", autumn.astimezone(UTC), SAO_PAULO, 1
    )


def test_riga_gap_and_fold() -> None:
    # 2024-03-31 03:00 EET -> 04:00 EEST (01:00 UTC); 2024-10-27 04:00 EEST -> 03:00 EET.
    assert run_iso("30 3 * * *", local(RIGA, 2024, 3, 30, 12, 0), RIGA, 2) == [
        "2024-03-31T04:00:00+03:00",
        "2024-04-01T03:30:00+03:00",
    ]
    assert run_iso("30 3 * * *", local(RIGA, 2024, 10, 26, 12, 0), RIGA, 3) == [
        "2024-10-27T03:30:00+03:00",
        "2024-10-28T03:30:00+02:00",
        "2024-10-29T03:30:00+02:00",
    ]


def test_shanghai_has_no_transitions() -> None:
    after = local(SHANGHAI, 2024, 3, 8, 12, 0)
    assert run_iso("0 9 * * 1-5", after, SHANGHAI, 3) == [
        "2024-03-11T09:00:00+08:00",
        "2024-03-12T09:00:00+08:00",
        "2024-03-13T09:00:00+08:00",
    ]


def test_vixie_or_rule_when_both_day_fields_are_restricted() -> None:
    # The 13th of the month or any Friday.
    after = at("2024-01-01T00:00:00+00:00")
    assert [f[:10] for f in run_iso("0 0 13 * 5", after, "UTC", 4)] == [
        "2024-01-05",
        "2024-01-12",
        "2024-01-13",
        "2024-01-19",
    ]


def test_vixie_and_rule_when_a_day_field_starts_with_a_star() -> None:
    # Days 1, 11, 21, 31 that are Fridays: 2024-03-01 is the first.
    after = at("2024-01-01T00:00:00+00:00")
    assert [f[:10] for f in run_iso("0 0 */10 * 5", after, "UTC", 2)] == [
        "2024-03-01",
        "2024-05-31",
    ]
    # Day-of-week starting with '*' makes it AND too: the 13th only on Sun, Tue, Thu, Sat.
    assert [f[:10] for f in run_iso("0 0 13 * */2", after, "UTC", 3)] == [
        "2024-01-13",
        "2024-02-13",
        "2024-04-13",
    ]


def test_february_29_skips_1900_style_century_years() -> None:
    assert run_iso("0 0 29 2 *", at("2096-03-01T00:00:00+00:00"), "UTC", 1) == [
        "2104-02-29T00:00:00+00:00"
    ]
    assert prev_run("0 0 29 2 *", at("2104-02-28T00:00:00+00:00"), "UTC") == at(
        "2096-02-29T00:00:00+00:00"
    )


def test_nothing_within_the_calendar_returns_none() -> None:
    assert next_run("0 0 29 2 *", at("9996-03-01T00:00:00+00:00"), "UTC") is None
    assert prev_run("0 0 29 2 *", at("0004-02-28T00:00:00+00:00"), "UTC") is None


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        next_run("* * * * *", datetime(2024, 1, 1), "UTC")
    with pytest.raises(ValueError, match="aware"):
        prev_run("* * * * *", datetime(2024, 1, 1), "UTC")


EXPRESSIONS = [
    "* * * * *",
    "*/5 * * * *",
    "*/7 * * * *",
    "0 * * * *",
    "30 * * * *",
    "*/20 1-3 * * *",
    "0 9 * * 1-5",
    "30 2 * * *",
    "0,30 1,2 * * *",
    "15 1 * * *",
    "0 0 * * *",
    "0 0 29 2 *",
    "0 0 13 * 5",
    "0 0 */10 * 5",
    "45 23 * * *",
    "0 12 1 */3 *",
    "5 4 * * sun",
    "*/15 0 * * *",
]

instants = st.datetimes(
    min_value=datetime(1999, 1, 1), max_value=datetime(2040, 12, 31), timezones=st.just(UTC)
)


@settings(max_examples=600, deadline=None)
@given(expr=st.sampled_from(EXPRESSIONS), zone=st.sampled_from(ZONES), when=instants)
@example(expr="*/30 * * * *", zone=NY, when=at("2024-11-03T05:45:00+00:00"))
@example(expr="45 * * * *", zone=NY, when=at("2024-11-03T06:10:00+00:00"))
@example(expr="0 0 * * *", zone=SAO_PAULO, when=at("2018-11-04T02:59:00+00:00"))
def test_prev_run_mirrors_next_run(expr: str, zone: str, when: datetime) -> None:
    nxt = next_run(expr, when, zone)
    prv = prev_run(expr, when, zone)
    assert nxt is not None and prv is not None
    assert nxt > when >= prv
    # No fire lies between the previous one and the argument, nor between it and the next.
    assert next_run(expr, prv, zone) == nxt
    assert prev_run(expr, nxt, zone) == nxt
    # In UTC: arithmetic on an aware datetime in its own zone is wall-clock arithmetic.
    assert prev_run(expr, nxt.astimezone(UTC) - timedelta(microseconds=1), zone) == prv
    assert nxt.tzinfo == ZoneInfo(zone) and prv.tzinfo == ZoneInfo(zone)
    assert nxt.astimezone(ZoneInfo(zone)).fold == nxt.fold


def _spans_a_transition(zone: ZoneInfo, start: datetime, end: datetime) -> bool:
    return bool(start.astimezone(zone).utcoffset() != end.astimezone(zone).utcoffset())


@settings(max_examples=1500, deadline=None)
@given(expr=st.sampled_from(EXPRESSIONS), zone=st.sampled_from(ZONES), when=instants)
def test_next_run_agrees_with_cronsim_where_their_semantics_agree(
    expr: str, zone: str, when: datetime
) -> None:
    tz = ZoneInfo(zone)
    start = when.astimezone(tz)
    try:
        theirs = next(CronSim(expr, start))
    except (CronSimError, StopIteration):
        assume(False)
        return
    ours = next_run(expr, start, tz)
    assert ours is not None
    # cronsim may answer an instant at or before the argument inside a repeated hour.
    assume(theirs > start)
    assume(not _spans_a_transition(tz, start - timedelta(hours=3), max(ours, theirs)))
    assert ours == theirs


def test_long_iterations_stay_in_step_with_cronsim_away_from_transitions() -> None:
    for expr in EXPRESSIONS:
        start = at("2024-01-01T00:00:00+00:00").astimezone(ZoneInfo(SHANGHAI))
        theirs = CronSim(expr, start)
        ours: datetime | None = start
        for _ in range(300):
            ours = next_run(expr, ours, SHANGHAI)  # type: ignore[arg-type]
            assert ours == next(theirs), expr


def test_parsed_and_text_expressions_give_the_same_answers() -> None:
    when = at("2024-05-05T05:05:00+00:00")
    assert next_run(parse("0 9 * * 1-5"), when, NY) == next_run("0 9 * * 1-5", when, NY)
