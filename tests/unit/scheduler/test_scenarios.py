"""The seed's table and more, on a fake clock: no sleeps, no threads, real zones."""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import _eval as cron_eval
from domi_desktop.model import CatchUp, SkipReason, Trigger, WakeReason
from domi_desktop.scheduler.decide import MAX_LISTED_SKIPS, Planner, decide, plan
from domi_desktop.scheduler.driver import Driver, JumpDetector
from tests.support.fakes import FakeClock, FakeTimer, MemoryBook, command_schedule

RIGA = "Europe/Riga"
NY = "America/New_York"


def riga(*fields: int, fold: int = 0) -> datetime:
    return datetime(*fields, tzinfo=ZoneInfo(RIGA), fold=fold)  # type: ignore[misc]


def report(last_due: datetime, **policies: object) -> object:
    """The running example: the rate-limit report, every day at 09:00 in Riga."""
    return command_schedule("0 9 * * *", RIGA, last_due, **policies)


YESTERDAY_9 = riga(2024, 6, 4, 9, 0)


def test_opened_at_0830_nothing_fires_and_it_waits_for_0900() -> None:
    now = riga(2024, 6, 5, 8, 30)
    result = plan([report(YESTERDAY_9)], now)  # type: ignore[list-item]
    assert result.fires == ()
    assert result.next_fire == riga(2024, 6, 5, 9, 0)
    assert result.next_wake == now + timedelta(seconds=60)


def test_woke_at_090030_fires_on_time() -> None:
    (fire,) = plan([report(YESTERDAY_9)], riga(2024, 6, 5, 9, 0, 30)).fires  # type: ignore[list-item]
    assert fire.due == riga(2024, 6, 5, 9, 0)
    assert not fire.late
    assert fire.trigger is Trigger.scheduled
    assert fire.missed_count == 0 and fire.skipped() == ()
    assert fire.run


def test_exactly_60_seconds_is_on_time_and_a_microsecond_more_is_late() -> None:
    on_time = decide(report(YESTERDAY_9), riga(2024, 6, 5, 9, 1))  # type: ignore[arg-type]
    late = decide(report(YESTERDAY_9), riga(2024, 6, 5, 9, 1, 0, 1))  # type: ignore[arg-type]
    assert on_time is not None and late is not None
    assert not on_time.late and on_time.trigger is Trigger.scheduled
    assert late.late and late.trigger is Trigger.catch_up


def test_woke_at_1000_fires_once_late() -> None:
    (fire,) = plan([report(YESTERDAY_9)], riga(2024, 6, 5, 10, 0)).fires  # type: ignore[list-item]
    assert fire.due == riga(2024, 6, 5, 9, 0)
    assert fire.late and fire.trigger is Trigger.catch_up
    assert fire.expected_last_due == YESTERDAY_9


def test_three_days_asleep_fires_today_once_and_skips_the_two_before() -> None:
    last = riga(2024, 6, 2, 9, 0)
    (fire,) = plan([report(last)], riga(2024, 6, 5, 10, 0)).fires  # type: ignore[list-item]
    assert fire.due == riga(2024, 6, 5, 9, 0)
    assert fire.late
    assert fire.missed_count == 2
    assert fire.skipped() == (
        riga(2024, 6, 3, 9, 0).astimezone(UTC),
        riga(2024, 6, 4, 9, 0).astimezone(UTC),
    )


def test_already_fired_today_nothing_more_fires() -> None:
    today = riga(2024, 6, 5, 9, 0)
    assert plan([report(today)], riga(2024, 6, 5, 23, 0)).fires == ()  # type: ignore[list-item]


def test_two_weeks_asleep_counts_every_missed_minute_without_walking_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    last = datetime(2024, 6, 1, 0, 0, tzinfo=UTC)
    schedule = command_schedule("* * * * *", NY, last)
    now = last + timedelta(days=14)
    # A walk is a step of the evaluator per missed minute: the steps are counted, not timed
    # (``bench/scheduler_bench.py`` has the time).
    steps = count_steps(monkeypatch)
    fire = decide(schedule, now)
    assert sum(steps.values()) <= 10, steps
    assert fire is not None
    assert fire.due == now
    assert fire.missed_count == 20_159
    skipped = fire.skipped()
    assert len(skipped) == MAX_LISTED_SKIPS
    assert skipped[0] == now - timedelta(minutes=100)
    assert skipped[-1] == now - timedelta(minutes=1)


def count_steps(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of the cron evaluator's one-step functions, wherever a module holds them."""
    steps: Counter[str] = Counter()
    for function in (cron_eval.next_run, cron_eval.prev_run):

        def counted(*args: Any, _function: Any = function, **kwargs: Any) -> Any:
            steps[_function.__name__] += 1
            return _function(*args, **kwargs)

        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("domi_desktop."):
                for name, value in list(vars(module).items()):
                    if value is function:
                        monkeypatch.setattr(module, name, counted)
    return steps


def test_catch_up_skip_records_a_late_due_as_skipped() -> None:
    fire = decide(report(YESTERDAY_9, catch_up=CatchUp.skip), riga(2024, 6, 5, 10, 0))  # type: ignore[arg-type]
    assert fire is not None
    assert not fire.run and fire.skip_reason is SkipReason.missed
    on_time = decide(report(YESTERDAY_9, catch_up=CatchUp.skip), riga(2024, 6, 5, 9, 0, 30))  # type: ignore[arg-type]
    assert on_time is not None and on_time.run


def test_catch_up_within_skips_dues_older_than_the_window() -> None:
    policy = {"catch_up_within": timedelta(hours=2)}
    inside = decide(report(YESTERDAY_9, **policy), riga(2024, 6, 5, 10, 59))  # type: ignore[arg-type]
    outside = decide(report(YESTERDAY_9, **policy), riga(2024, 6, 5, 11, 1))  # type: ignore[arg-type]
    assert inside is not None and inside.run
    assert outside is not None and not outside.run
    assert outside.skip_reason is SkipReason.catch_up_window


def test_pause_all_records_dues_as_skipped_paused() -> None:
    (fire,) = plan([report(YESTERDAY_9)], riga(2024, 6, 5, 9, 0, 10), paused=True).fires  # type: ignore[list-item]
    assert not fire.run and fire.skip_reason is SkipReason.paused


def test_jitter_delays_the_start_deterministically_within_the_window() -> None:
    schedule = report(YESTERDAY_9, jitter=timedelta(minutes=5))
    first = decide(schedule, riga(2024, 6, 5, 9, 0, 10))  # type: ignore[arg-type]
    again = decide(schedule, riga(2024, 6, 5, 9, 0, 20))  # type: ignore[arg-type]
    assert first is not None and again is not None
    assert timedelta(0) <= first.delay < timedelta(minutes=5)
    assert first.delay == again.delay
    assert first.due == riga(2024, 6, 5, 9, 0)


def test_disabled_schedules_never_fire() -> None:
    from dataclasses import replace

    schedule = replace(report(YESTERDAY_9), enabled=False)  # type: ignore[type-var]
    assert plan([schedule], riga(2024, 6, 5, 10, 0)).fires == ()


def test_a_schedule_with_a_vanished_zone_is_reported_not_fatal() -> None:
    broken = command_schedule("0 9 * * *", "Mars/Olympus", YESTERDAY_9, schedule_id=2)
    result = plan([report(YESTERDAY_9), broken], riga(2024, 6, 5, 10, 0))  # type: ignore[list-item]
    assert [f.schedule_id for f in result.fires] == [1]
    assert result.errors[0][0] == 2 and "Mars/Olympus" in result.errors[0][1]


# The driver, on the fake clock and timer.


def start_driver(book: MemoryBook, now: datetime) -> tuple[Driver, FakeClock, FakeTimer]:
    clock = FakeClock(now.astimezone(UTC))
    timer = FakeTimer(clock)
    driver = Driver(clock, timer, book, book)
    driver.start()
    return driver, clock, timer


def test_an_awake_machine_fires_at_the_due_minute_on_time_and_wakes_at_least_every_minute() -> None:
    book = MemoryBook(command_schedule("*/5 * * * *", RIGA, riga(2024, 6, 5, 8, 55)))
    driver, clock, timer = start_driver(book, riga(2024, 6, 5, 8, 57))
    assert driver.last_wake is not None and driver.last_wake.reason == "start"
    assert 0 < timer.next_delay() <= 60
    timer.advance(timedelta(hours=1))
    assert [f.due for f in book.fired] == [
        riga(2024, 6, 5, 9, 0) + timedelta(minutes=5 * i) for i in range(12)
    ]
    assert not any(f.late for f in book.fired)
    assert all(f.fired_at == f.due for f in book.fired)  # the timer aims at the due itself
    assert driver.next_wake is not None
    assert driver.next_wake - clock.now() <= timedelta(seconds=60)


def test_resume_from_sleep_fires_at_once_late_without_waiting_for_the_timer() -> None:
    book = MemoryBook(report(YESTERDAY_9))
    driver, clock, timer = start_driver(book, riga(2024, 6, 5, 8, 0))
    clock.sleep_machine(timedelta(hours=2))  # lid closed 08:00-10:00
    assert timer.run_due() == 0  # the monotonic clock stood still: no timer is due yet
    driver.wake(WakeReason.resume)
    (fire,) = book.fired
    assert fire.late and fire.fired_at == riga(2024, 6, 5, 10, 0)
    assert driver.last_wake is not None and driver.last_wake.reason == "resume"


def test_without_a_resume_signal_the_next_tick_sees_the_jump_and_catches_up() -> None:
    book = MemoryBook(report(YESTERDAY_9))
    driver, clock, timer = start_driver(book, riga(2024, 6, 5, 8, 0))
    clock.sleep_machine(timedelta(hours=2))
    timer.advance(timedelta(seconds=61))
    (fire,) = book.fired
    assert fire.late and fire.trigger is Trigger.catch_up
    assert driver.last_wake is not None
    assert driver.last_wake.reason == "clock_jump"


def test_clock_set_backwards_never_fires_a_due_twice() -> None:
    book = MemoryBook(report(YESTERDAY_9))
    driver, clock, timer = start_driver(book, riga(2024, 6, 5, 8, 59))
    timer.advance(timedelta(minutes=2))
    assert [f.due for f in book.fired] == [riga(2024, 6, 5, 9, 0)]
    clock.set_wall(riga(2024, 6, 4, 8, 0).astimezone(UTC))  # back a whole day
    timer.advance(timedelta(seconds=60))  # the next tick sees the wall clock move back
    assert driver.last_wake is not None and driver.last_wake.reason == "clock_jump"
    timer.advance(timedelta(hours=26) - timedelta(seconds=60))  # wall: 2024-06-05 10:00 again
    assert [f.due for f in book.fired] == [riga(2024, 6, 5, 9, 0)]
    timer.advance(timedelta(hours=23, minutes=1))
    assert [f.due for f in book.fired] == [riga(2024, 6, 5, 9, 0), riga(2024, 6, 6, 9, 0)]


def test_dst_gap_a_fixed_time_job_runs_once_at_0300_on_spring_forward_day() -> None:
    book = MemoryBook(command_schedule("30 2 * * *", NY, datetime(2024, 3, 9, 7, 30, tzinfo=UTC)))
    _driver, _clock, timer = start_driver(book, datetime(2024, 3, 10, 6, 0, tzinfo=UTC))
    timer.advance(timedelta(hours=3))
    (fire,) = book.fired
    assert fire.due.astimezone(ZoneInfo(NY)).isoformat() == "2024-03-10T03:00:00-04:00"
    assert not fire.late


def test_dst_fold_fixed_time_runs_once_and_wildcard_runs_in_both_copies() -> None:
    start = datetime(2024, 11, 3, 4, 0, tzinfo=UTC)  # 00:00 EDT
    book = MemoryBook(
        command_schedule("30 1 * * *", NY, start, schedule_id=1),
        command_schedule("30 * * * *", NY, start, schedule_id=2),
    )
    _driver, _clock, timer = start_driver(book, start)
    timer.advance(timedelta(hours=4))
    fixed = [f.due.astimezone(ZoneInfo(NY)).isoformat() for f in book.fired if f.schedule_id == 1]
    wild = [f.due.astimezone(ZoneInfo(NY)).isoformat() for f in book.fired if f.schedule_id == 2]
    assert fixed == ["2024-11-03T01:30:00-04:00"]
    assert wild == [
        "2024-11-03T00:30:00-04:00",
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T02:30:00-05:00",
    ]
    assert not any(f.late for f in book.fired)


def test_a_local_schedule_follows_a_zone_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    last = datetime(2024, 6, 4, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai
    book = MemoryBook(command_schedule("0 9 * * *", "local", last))
    driver, _clock, _timer = start_driver(book, datetime(2024, 6, 4, 12, 0, tzinfo=UTC))
    assert driver.next_fire(1) == datetime(2024, 6, 5, 1, 0, tzinfo=UTC)
    monkeypatch.setenv("TZ", "Europe/Riga")  # the laptop flew to Riga
    driver.wake(WakeReason.tz_change)
    assert driver.next_fire(1) == datetime(2024, 6, 5, 6, 0, tzinfo=UTC)


def test_an_edit_reloads_the_schedule_and_resets_the_plan() -> None:
    from dataclasses import replace

    book = MemoryBook(report(YESTERDAY_9))
    driver, clock, _timer = start_driver(book, riga(2024, 6, 5, 8, 0))
    now = clock.now()
    book.schedules[1] = replace(book.schedules[1], expr="0 8 * * *", last_due=now)
    driver.reload(1)
    assert driver.last_wake is not None and driver.last_wake.reason == "edit"
    assert book.fired == []  # 08:00 today is not after the edit: nothing fires for the past
    assert driver.next_fire(1) == riga(2024, 6, 6, 8, 0)
    book.schedules[1] = replace(book.schedules[1], enabled=False)
    driver.reload(1)
    assert driver.next_fire(1) is None


def test_a_fire_claimed_by_another_process_is_not_fired_here() -> None:
    book = MemoryBook(report(YESTERDAY_9))
    driver, _clock, timer = start_driver(book, riga(2024, 6, 5, 8, 59, 30))
    from dataclasses import replace

    # Another process on the same DB claims 09:00 first.
    book.schedules[1] = replace(book.schedules[1], last_due=riga(2024, 6, 5, 9, 0))
    timer.advance(timedelta(minutes=2))
    assert book.fired == []
    assert driver.next_fire(1) == riga(2024, 6, 6, 9, 0)


def test_a_failing_sink_does_not_stop_the_timer() -> None:
    class Failing(MemoryBook):
        def fire(self, decision: object) -> bool:
            raise OSError("disk full")

    book = Failing(report(YESTERDAY_9))
    driver, _clock, timer = start_driver(book, riga(2024, 6, 5, 10, 0))
    assert timer.pending(), "the driver re-armed its timer"
    assert driver.next_wake is not None


def test_the_jump_detector_tells_sleep_and_clock_changes_from_time_passing() -> None:
    detector = JumpDetector(tolerance=timedelta(seconds=5))
    base = datetime(2024, 1, 1, tzinfo=UTC)
    assert not detector.observe(base, 100.0)
    assert not detector.observe(base + timedelta(seconds=60), 160.0)
    assert not detector.observe(base + timedelta(seconds=124), 224.0 + 4)
    assert detector.observe(base + timedelta(hours=2), 230.0)  # slept
    assert detector.observe(base, 231.0)  # set back


def test_the_planner_answers_an_idle_wake_without_evaluating_cron() -> None:
    schedules = [
        command_schedule("0 9 * * *", RIGA, YESTERDAY_9, schedule_id=i) for i in range(1, 200)
    ]
    planner = Planner(schedules)
    result = planner.plan(riga(2024, 6, 5, 8, 0))
    assert result.fires == ()
    assert result.next_fire == riga(2024, 6, 5, 9, 0)


def test_a_store_that_cannot_be_read_after_a_fire_does_not_stop_the_timer() -> None:
    class Unreadable(MemoryBook):
        def get(self, schedule_id: int) -> object:
            raise OSError("database is locked")

    book = Unreadable(report(YESTERDAY_9))  # type: ignore[arg-type]
    driver, _clock, timer = start_driver(book, riga(2024, 6, 5, 10, 0))
    assert len(book.fired) == 1
    assert timer.pending(), "the driver re-armed its timer"
    assert driver.last_wake is not None and driver.last_wake.reason == "start"


def test_the_planner_knows_which_schedule_fires_next() -> None:
    planner = Planner(
        [
            command_schedule("0 9 * * *", RIGA, YESTERDAY_9, schedule_id=1),
            command_schedule("30 8 * * *", RIGA, YESTERDAY_9, schedule_id=2),
        ]
    )
    soonest = planner.soonest()
    assert soonest is not None
    assert soonest[0] == riga(2024, 6, 5, 8, 30) and soonest[1].id == 2
    assert Planner().soonest() is None
