"""Faults in the pure core, on a fake clock: clock jumps, other writers, bad rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from domi_desktop.scheduler.driver import Driver
from tests.support.fakes import FakeClock, FakeTimer, MemoryBook, command_schedule

T0 = datetime(2024, 6, 5, 9, 0, 30, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def start_driver(book: MemoryBook, now: datetime) -> tuple[Driver, FakeClock, FakeTimer]:
    clock = FakeClock(now)
    timer = FakeTimer(clock)
    driver = Driver(clock, timer, book, book)
    driver.start()
    return driver, clock, timer


def every_minute(last_due: datetime, schedule_id: int = 1) -> object:
    return command_schedule("* * * * *", "UTC", last_due, schedule_id=schedule_id)


def test_after_a_jump_forward_three_days_and_back_it_fires_again_within_one_wake() -> None:
    book = MemoryBook(every_minute(T0.replace(second=0)))  # type: ignore[arg-type]
    driver, clock, timer = start_driver(book, T0)
    timer.advance(2 * MINUTE)
    assert len(book.fired) == 2
    clock.set_wall(clock.now() + timedelta(days=3))
    timer.advance(MINUTE)  # the tick after the jump fires once; the 3 days are skipped
    future = book.fired[-1]
    assert future.due > T0 + timedelta(days=3) - MINUTE and future.missed_count > 4000
    clock.set_wall(clock.now() - timedelta(days=3))  # and back
    back = clock.now()
    timer.advance(2 * MINUTE)
    assert [f.due for f in book.fired if f.due < T0 + timedelta(days=1)][-2:] == [
        (back + MINUTE).replace(second=0, microsecond=0),
        (back + 2 * MINUTE).replace(second=0, microsecond=0),
    ]
    assert driver.next_fire(1) is not None
    assert driver.next_fire(1) - clock.now() <= MINUTE  # type: ignore[operator]


def test_after_the_clock_went_back_a_due_already_decided_is_not_run_again() -> None:
    book = MemoryBook(every_minute(T0.replace(second=0)))  # type: ignore[arg-type]
    _driver, clock, timer = start_driver(book, T0)
    timer.advance(10 * MINUTE)  # 09:01 .. 09:10 ran
    ran = [f.due for f in book.fired]
    assert len(ran) == 10
    clock.set_wall(clock.now() - 5 * MINUTE)  # back to 09:05:30
    timer.advance(30 * MINUTE)
    dues = [f.due for f in book.fired]
    assert len(dues) == len(set(dues)), "a due ran twice"
    assert dues[:10] == ran and dues[10] == ran[-1] + MINUTE  # then on from 09:11, none missed
    assert all(b - a == MINUTE for a, b in pairwise(dues))


def test_the_clock_back_while_the_app_was_stopped_is_seen_at_start() -> None:
    book = MemoryBook(every_minute(T0 + timedelta(days=3)))  # type: ignore[arg-type]
    driver, _clock, timer = start_driver(book, T0)
    assert driver.next_fire(1) == (T0 + MINUTE).replace(second=0)
    timer.advance(MINUTE)
    assert len(book.fired) == 1


def test_a_schedule_another_process_wrote_is_planned_at_the_next_wake() -> None:
    book = MemoryBook(every_minute(T0, schedule_id=1))  # type: ignore[arg-type]
    driver, _clock, timer = start_driver(book, T0)
    book.schedules[2] = every_minute(T0, schedule_id=2)  # type: ignore[assignment]
    book.touch()
    assert driver.next_fire(2) is None
    timer.advance(MINUTE)
    assert driver.next_fire(2) is not None
    assert {f.schedule_id for f in book.fired} == {1, 2}


def test_an_unreadable_schedule_is_reported_and_the_others_fire() -> None:
    book = MemoryBook(*(every_minute(T0, schedule_id=i) for i in range(1, 40)))  # type: ignore[arg-type]
    book.broken[40] = "schedule 40 cannot be read: action: not JSON"
    driver, _clock, timer = start_driver(book, T0)
    timer.advance(MINUTE)
    assert {f.schedule_id for f in book.fired} == set(range(1, 40))
    plan = driver.wake(driver.last_wake.reason)  # type: ignore[union-attr]
    assert dict(plan.errors) == {40: "schedule 40 cannot be read: action: not JSON"}
