"""The wake plan: when to wake the machine for a wake-to-run schedule (pure, a fixed ``now``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta

from domi_desktop.model import (
    CommandAction,
    Conditions,
    HttpAction,
    NetworkState,
    Policies,
    Schedule,
    SystemState,
    Window,
)
from domi_desktop.scheduler.wake import LEAD, WakeTarget, can_wake_for, wake_plan

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
MAINS = SystemState()
BATTERY = SystemState(on_ac=False, battery_percent=40)


def waking(
    schedule_id: int = 1,
    expr: str = "0 9 * * *",
    tz: str = "UTC",
    *,
    last_due: datetime | None = NOW - timedelta(hours=23),
    conditions: Conditions = Conditions(),
    wake: bool = True,
    enabled: bool = True,
) -> Schedule:
    return Schedule(
        id=schedule_id, name=f"s{schedule_id}", expr=expr, tz=tz,
        action=CommandAction(argv=("true",)), enabled=enabled,
        policies=Policies(wake_to_run=wake, conditions=conditions), last_due=last_due,
    )  # fmt: skip


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 3, 2, hour, minute, second, tzinfo=UTC)


def test_it_wakes_the_machine_thirty_seconds_before_the_due() -> None:
    assert wake_plan([waking()], MAINS, NOW) == WakeTarget(at(8, 59, 30), at(9), (1,))
    assert timedelta(seconds=30) == LEAD


def test_the_earliest_of_several_schedules_wins_and_ties_are_woken_together() -> None:
    schedules = [
        waking(1, "0 9 * * *"),
        waking(2, "30 8 * * *"),
        waking(3, "30 8 * * *"),
        waking(4, "15 8 * * *", wake=False),  # sooner, but it does not ask for a wake
    ]
    assert wake_plan(schedules, MAINS, NOW) == WakeTarget(at(8, 29, 30), at(8, 30), (2, 3))


def test_nothing_wakes_without_a_wake_to_run_schedule() -> None:
    assert wake_plan([], MAINS, NOW) is None
    assert wake_plan([waking(wake=False)], MAINS, NOW) is None


def test_a_disabled_schedule_wakes_nothing() -> None:
    assert wake_plan([waking(enabled=False)], MAINS, NOW) is None
    assert wake_plan([waking(1, enabled=False), waking(2, "0 10 * * *")], MAINS, NOW) == (
        WakeTarget(at(9, 59, 30), at(10), (2,))
    )


def test_nothing_wakes_while_every_schedule_is_paused() -> None:
    assert wake_plan([waking()], MAINS, NOW, paused=True) is None


def test_a_schedule_that_never_had_a_due_wakes_nothing() -> None:
    assert wake_plan([waking(last_due=None)], MAINS, NOW) is None


def test_an_ac_only_job_does_not_wake_a_machine_on_battery() -> None:
    ac_only = waking(1, conditions=Conditions(on_ac_power=True))
    assert wake_plan([ac_only], BATTERY, NOW) is None
    assert wake_plan([ac_only], MAINS, NOW) == WakeTarget(at(8, 59, 30), at(9), (1,))
    # The next schedule that could run is woken for instead.
    other = waking(2, "0 10 * * *")
    assert wake_plan([ac_only, other], BATTERY, NOW) == WakeTarget(at(9, 59, 30), at(10), (2,))


def test_a_job_waiting_for_more_charge_than_the_battery_has_does_not_wake_it() -> None:
    thirsty = waking(conditions=Conditions(min_battery_percent=50))
    assert wake_plan([thirsty], BATTERY, NOW) is None
    assert wake_plan([thirsty], replace(BATTERY, battery_percent=60), NOW) is not None
    assert wake_plan([thirsty], MAINS, NOW) is not None


def test_the_network_comes_back_after_a_wake_so_an_http_job_still_wakes_the_machine() -> None:
    http = replace(waking(), action=HttpAction(url="https://example.com/"))
    offline = SystemState(network=NetworkState.offline)
    assert can_wake_for(http, offline)
    assert wake_plan([http], offline, NOW) == WakeTarget(at(8, 59, 30), at(9), (1,))


def test_a_due_closer_than_the_lead_is_woken_for_at_the_due_itself() -> None:
    now = at(8, 59, 50)
    assert wake_plan([waking()], MAINS, now) == WakeTarget(at(9), at(9), (1,))


def test_a_due_at_now_is_the_present_wake_s_business_and_the_plan_looks_at_the_next() -> None:
    assert wake_plan([waking()], MAINS, at(9)) == WakeTarget(
        at(9, 0, 0) + timedelta(days=1) - LEAD, at(9) + timedelta(days=1), (1,)
    )


def test_a_last_due_ahead_of_now_is_planned_from() -> None:
    # Fired at 09:00 already (the clock went back to 08:00): the next due is tomorrow's.
    schedule = waking(last_due=at(9))
    assert wake_plan([schedule], MAINS, NOW) == WakeTarget(
        at(8, 59, 30) + timedelta(days=1), at(9) + timedelta(days=1), (1,)
    )


def test_a_schedule_whose_zone_vanished_is_left_out_not_raised() -> None:
    broken = waking(1, tz="Mars/Olympus_Mons")
    assert wake_plan([broken, waking(2, "0 10 * * *")], MAINS, NOW) == WakeTarget(
        at(9, 59, 30), at(10), (2,)
    )


def test_spring_forward_a_fixed_time_in_the_gap_wakes_for_three_o_clock() -> None:
    # New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00 UTC). 02:30 does not exist;
    # a fixed-time job runs at 03:00 EDT (Debian cron), so the machine wakes at 02:59:30 EDT.
    now = datetime(2026, 3, 8, 5, 0, tzinfo=UTC)  # 00:00 EST
    job = waking(1, "30 2 * * *", "America/New_York", last_due=now - timedelta(hours=20))
    target = wake_plan([job], MAINS, now)
    assert target == WakeTarget(
        datetime(2026, 3, 8, 6, 59, 30, tzinfo=UTC), datetime(2026, 3, 8, 7, 0, tzinfo=UTC), (1,)
    )


def test_spring_forward_an_hourly_job_skips_the_missing_hour() -> None:
    # A wildcard job follows the wall clock: 02:15 does not exist that night.
    now = datetime(2026, 3, 8, 6, 20, tzinfo=UTC)  # 01:20 EST
    job = waking(1, "15 * * * *", "America/New_York", last_due=now - timedelta(minutes=5))
    target = wake_plan([job], MAINS, now)
    assert target is not None
    assert target.due == datetime(2026, 3, 8, 7, 15, tzinfo=UTC)  # 03:15 EDT


def test_fall_back_a_fixed_time_in_the_fold_wakes_once() -> None:
    # New York, 2026-11-01: 02:00 EDT goes back to 01:00 EST (06:00 UTC); 01:30 happens twice.
    now = datetime(2026, 11, 1, 4, 0, tzinfo=UTC)  # 00:00 EDT
    job = waking(1, "30 1 * * *", "America/New_York", last_due=now - timedelta(hours=20))
    first = wake_plan([job], MAINS, now)
    assert first is not None
    assert first.due == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT
    # After that fire, the next wake is the next day's, not the repeated 01:30 EST.
    fired = replace(job, last_due=first.due)
    second = wake_plan([fired], MAINS, first.due)
    assert second is not None
    assert second.due == datetime(2026, 11, 2, 6, 30, tzinfo=UTC)


def test_fall_back_a_wildcard_job_wakes_for_each_occurrence_of_the_fold() -> None:
    now = datetime(2026, 11, 1, 5, 20, tzinfo=UTC)  # 01:20 EDT
    job = waking(1, "30 * * * *", "America/New_York", last_due=now - timedelta(minutes=50))
    first = wake_plan([job], MAINS, now)
    assert first is not None and first.due == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)
    second = wake_plan([replace(job, last_due=first.due)], MAINS, first.due)
    assert second is not None and second.due == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    assert second.at == datetime(2026, 11, 1, 6, 29, 30, tzinfo=UTC)  # 01:29:30 EST


def test_a_schedule_with_a_window_wakes_the_machine_at_the_windows_start() -> None:
    night = Conditions(window=Window(time(22), time(6)))
    # Claimed at 00:00, its run waits for 22:00 tonight.
    claimed = waking(expr="@daily", last_due=at(0), conditions=night)
    assert wake_plan([claimed], MAINS, NOW) == WakeTarget(at(21, 59, 30), at(22), (1,))
    # Tonight's window open already: the next one, tomorrow night's.
    late = wake_plan([claimed], MAINS, at(23))
    assert late is not None and late.due == at(22) + timedelta(days=1)
