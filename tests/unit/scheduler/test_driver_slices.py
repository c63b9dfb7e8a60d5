"""A wake that owes many fires decides them a slice at a time, the loop turning in between (the
driver's ``decide_slice``): the same fires as deciding them at once, each exactly once, and a wake
or a stop that comes meanwhile is neither lost nor acted on twice. On the fake clock and timer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domi_desktop.model import WakeReason
from domi_desktop.scheduler.driver import Driver
from tests.support.fakes import FakeClock, FakeTimer, MemoryBook, command_schedule

SCHEDULES = 1000
SLICE = 100
ASLEEP_AT = datetime(2024, 6, 5, 22, 0, tzinfo=UTC)
EXPRS = ("* * * * *", "7 * * * *", "*/5 * * * *", "30 9 * * *")


def book() -> MemoryBook:
    return MemoryBook(
        *(
            command_schedule(EXPRS[i % len(EXPRS)], "UTC", ASLEEP_AT, schedule_id=i + 1)
            for i in range(SCHEDULES)
        )
    )


def asleep_a_night(decide_slice: int | None) -> tuple[Driver, MemoryBook, FakeTimer]:
    """A driver started before a night asleep, just resumed: every schedule owes a fire."""
    memory = book()
    clock = FakeClock(ASLEEP_AT + timedelta(seconds=10))
    timer = FakeTimer(clock)
    driver = Driver(clock, timer, memory, memory, decide_slice=decide_slice)
    driver.start()
    assert memory.fired == []
    clock.sleep_machine(timedelta(hours=12))
    return driver, memory, timer


def turns(timer: FakeTimer) -> int:
    """The loop's turns until no zero-delay timer is left: one slice each."""
    count = 0
    while ready := [h for h in timer.pending() if h.due <= timer.clock.monotonic()]:
        handle = min(ready, key=lambda h: h.due)
        handle.cancelled = True
        handle.callback()
        count += 1
    return count


def test_a_sliced_wake_fires_what_the_whole_wake_fires_once_each() -> None:
    whole_driver, whole, _ = asleep_a_night(None)
    whole_driver.wake(WakeReason.resume)
    sliced_driver, sliced, timer = asleep_a_night(SLICE)

    plan = sliced_driver.wake(WakeReason.resume)
    assert plan.fires == () and sliced.fired == [], "decided before the loop could turn"
    assert turns(timer) == SCHEDULES // SLICE - 1
    assert len(whole.fired) == SCHEDULES
    assert sliced.fired == whole.fired and sliced.lost == []
    assert sliced_driver.next_wake == whole_driver.next_wake
    assert sliced_driver.last_wake is not None and sliced_driver.last_wake.reason == "resume"
    # Each schedule's next fire came with its decision: the plan after it is the whole wake's.
    assert all(sliced_driver.next_fire(s) == whole_driver.next_fire(s) for s in sliced.schedules)


def test_a_wake_while_slicing_comes_after_the_hand_over_and_fires_nothing_twice() -> None:
    driver, memory, timer = asleep_a_night(SLICE)
    driver.wake(WakeReason.resume)
    for _ in range(3):
        (handle,) = [h for h in timer.pending() if h.due <= timer.clock.monotonic()]
        handle.cancelled = True
        handle.callback()
    meanwhile = driver.wake(WakeReason.edit)
    assert meanwhile.fires == () and memory.fired == []
    turns(timer)
    assert len(memory.fired) == SCHEDULES == len({f.schedule_id for f in memory.fired})
    assert driver.last_wake is not None and driver.last_wake.reason == "edit"


def test_a_stop_while_slicing_hands_nothing_over_and_leaves_no_timer() -> None:
    driver, memory, timer = asleep_a_night(SLICE)
    driver.wake(WakeReason.resume)
    driver.stop()
    assert turns(timer) == 0
    assert memory.fired == [] and timer.pending() == []


def test_a_wake_owing_no_more_than_a_slice_is_decided_at_once() -> None:
    driver, memory, timer = asleep_a_night(SCHEDULES)
    plan = driver.wake(WakeReason.resume)
    assert len(plan.fires) == SCHEDULES == len(memory.fired)
    assert turns(timer) == 0
