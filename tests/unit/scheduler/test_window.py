from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.model import (
    AtWindowEnd,
    CommandAction,
    Conditions,
    Policies,
    Schedule,
    SystemState,
    Window,
)
from domi_desktop.scheduler.conditions import Need, Unmet, Verdict
from domi_desktop.scheduler.decide import decide
from domi_desktop.scheduler.window import (
    Stretch,
    WindowTrack,
    observe,
    occurrence,
    parse_window,
    served,
    sleeps_seen,
    upcoming_windows,
    wall_instant,
    window_gate,
    window_reason,
)

NY = ZoneInfo("America/New_York")
NIGHT = Window(time(22), time(6))
HOUR = timedelta(hours=1)


def ny(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=NY).astimezone(UTC)


def test_a_window_is_read_from_its_hours() -> None:
    assert parse_window("22:00-06:00") == NIGHT
    assert parse_window(" 9:30 - 17:00 ") == Window(time(9, 30), time(17))
    assert parse_window("22:00-06:00").text == "22:00-06:00"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("22-06", "is not HH:MM-HH:MM"),
        ("25:00-06:00", "25:00 in '25:00-06:00' is not a time of day"),
        ("10:61-11:00", "is not a time of day"),
        ("06:00-06:00", "starts and ends at the same time"),
        ("", "is not HH:MM-HH:MM"),
    ],
)
def test_a_bad_window_is_named_with_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ParamError, match=r"^--window: ") as caught:
        parse_window(text, "--window")
    assert says in str(caught.value)


def test_a_start_inside_a_dst_gap_is_the_first_instant_after_it() -> None:
    # 2026-03-08 02:00 EST -> 03:00 EDT in New York.
    assert wall_instant(date(2026, 3, 8), time(2, 30), NY, last=False) == ny(2026, 3, 8, 3)
    assert wall_instant(date(2026, 3, 8), time(2, 30), NY, last=True) == ny(2026, 3, 8, 3)


def test_a_time_in_a_fold_is_its_first_or_its_last_occurrence() -> None:
    # 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens twice.
    first = wall_instant(date(2026, 11, 1), time(1, 30), NY, last=False)
    second = wall_instant(date(2026, 11, 1), time(1, 30), NY, last=True)
    assert second - first == HOUR
    assert first == ny(2026, 11, 1, 1, 30)


def test_a_night_keeps_its_wall_clock_edges_and_its_real_length_through_dst() -> None:
    assert occurrence(NIGHT, date(2026, 3, 7), NY).length == timedelta(hours=7)
    assert occurrence(NIGHT, date(2026, 3, 9), NY).length == timedelta(hours=8)
    assert occurrence(NIGHT, date(2026, 10, 31), NY).length == timedelta(hours=9)


def test_a_daily_due_serves_the_night_that_begins_that_day() -> None:
    stretch = served("@daily", NY, NIGHT, ny(2026, 6, 1))
    assert stretch == Stretch(ny(2026, 6, 1, 22), ny(2026, 6, 2, 6), NIGHT)


def test_an_hourly_due_serves_its_own_hour_of_the_night_and_none_outside() -> None:
    assert served("@hourly", NY, NIGHT, ny(2026, 6, 1, 22)) == Stretch(
        ny(2026, 6, 1, 22), ny(2026, 6, 1, 23), NIGHT
    )
    assert served("@hourly", NY, NIGHT, ny(2026, 6, 2, 5)) == Stretch(
        ny(2026, 6, 2, 5), ny(2026, 6, 2, 6), NIGHT
    )
    assert served("@hourly", NY, NIGHT, ny(2026, 6, 2, 12)) is None


def test_a_weekly_due_serves_the_first_night_of_its_week() -> None:
    # 2026-06-07 is a Sunday.
    stretch = served("@weekly", NY, NIGHT, ny(2026, 6, 7))
    assert stretch is not None
    assert stretch.start == ny(2026, 6, 7, 22)


def test_preview_lists_the_next_windows_with_their_real_lengths() -> None:
    found = upcoming_windows("@daily", NY, NIGHT, ny(2026, 10, 30, 12), 3)
    assert [stretch.length for _, stretch in found] == [
        timedelta(hours=9),
        timedelta(hours=8),
        timedelta(hours=8),
    ]
    assert [due for due, _ in found] == [ny(2026, 10, 31), ny(2026, 11, 1), ny(2026, 11, 2)]


CHARGER = Conditions(on_ac_power=True, window=NIGHT)
TONIGHT = Stretch(ny(2026, 6, 1, 22), ny(2026, 6, 2, 6), NIGHT)


def test_before_its_window_a_run_waits_for_it_until_its_start() -> None:
    gate = window_gate(CHARGER, "command", SystemState(), TONIGHT, ny(2026, 6, 1, 9), None, "")
    assert gate.verdict is Verdict.wait
    assert gate.until == TONIGHT.start
    assert gate.reason == "waiting for the window 22:00-06:00"


def test_inside_its_window_the_other_conditions_decide_until_the_windows_end() -> None:
    inside = ny(2026, 6, 1, 23)
    battery = window_gate(CHARGER, "command", SystemState(on_ac=False), TONIGHT, inside, None, "")
    assert battery.verdict is Verdict.wait
    assert battery.until == TONIGHT.end
    mains = window_gate(CHARGER, "command", SystemState(), TONIGHT, inside, None, "")
    assert mains.verdict is Verdict.run


def test_after_its_window_a_run_is_skipped_or_runs_saying_why() -> None:
    after = ny(2026, 6, 2, 7)
    said = "on battery the whole window"
    skip = window_gate(CHARGER, "command", SystemState(), TONIGHT, after, None, said)
    assert (skip.verdict, skip.reason) == (Verdict.skip, said)
    run = Conditions(window=NIGHT, at_window_end=AtWindowEnd.run)
    anyway = window_gate(run, "command", SystemState(), TONIGHT, after, None, said)
    assert anyway.verdict is Verdict.run_anyway
    assert anyway.reason == "ran at the window's end: on battery the whole window"


def test_a_due_outside_every_window_is_skipped_saying_so() -> None:
    gate = window_gate(CHARGER, "command", SystemState(), None, ny(2026, 6, 1, 12), None, "")
    assert (gate.verdict, gate.reason) == (Verdict.skip, "outside the window 22:00-06:00")


def test_an_unused_window_says_the_sleeps_that_touch_it_as_they_were() -> None:
    sleep = (ny(2026, 6, 1, 21, 40), ny(2026, 6, 2, 7, 10))
    assert window_reason(TONIGHT, NY, [sleep], set()) == "asleep 21:40-07:10"
    part = (ny(2026, 6, 1, 21), ny(2026, 6, 2, 1, 30))
    assert (
        window_reason(TONIGHT, NY, [part], {Need.charger})
        == "asleep 21:00-01:30, on battery the rest of the window"
    )
    assert window_reason(TONIGHT, NY, [], {Need.charger}) == "on battery the whole window"
    long = (ny(2026, 5, 30, 21), ny(2026, 6, 3, 8))
    assert window_reason(TONIGHT, NY, [long], set()) == "asleep 2026-05-30 21:00-2026-06-03 08:00"


def test_looks_further_apart_than_a_few_minutes_are_sleeps() -> None:
    track = WindowTrack()
    battery = (Unmet(Need.charger), Unmet(Need.window, name="22:00-06:00"))
    for minutes in [*range(0, 30), *range(200, 210)]:
        track = observe(track, TONIGHT.start + timedelta(minutes=minutes), battery)
    assert track.needs == {Need.charger}
    assert sleeps_seen(track, TONIGHT) == [
        (TONIGHT.start + timedelta(minutes=29), TONIGHT.start + timedelta(minutes=200)),
        (TONIGHT.start + timedelta(minutes=209), TONIGHT.end),
    ]


def nightly(last_due: datetime, window: Window | None = NIGHT) -> Schedule:
    conditions = Conditions(window=window)
    return Schedule(
        1, "nightly", "@daily", "America/New_York", CommandAction(argv=("true",)),
        policies=Policies(conditions=conditions), last_due=last_due,
    )  # fmt: skip


def test_waking_late_over_two_dues_fires_the_night_still_open_first() -> None:
    # Asleep from before the 2nd's midnight to 03:00 on the 3rd: the night of the 2nd is open.
    woke = ny(2026, 6, 3, 3)
    first = decide(nightly(ny(2026, 6, 1)), woke)
    assert first is not None
    assert (first.due, first.missed_count) == (ny(2026, 6, 2), 0)
    then = decide(nightly(first.due), woke)
    assert then is not None and then.due == ny(2026, 6, 3)
    plain = decide(nightly(ny(2026, 6, 1), window=None), woke)
    assert plain is not None and (plain.due, plain.missed_count) == (ny(2026, 6, 3), 1)


def test_a_night_already_over_is_missed_as_any_due() -> None:
    woke = ny(2026, 6, 3, 7)
    fired = decide(nightly(ny(2026, 6, 1)), woke)
    assert fired is not None and (fired.due, fired.missed_count) == (ny(2026, 6, 3), 1)
