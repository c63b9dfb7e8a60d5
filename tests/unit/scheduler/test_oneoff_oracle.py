"""One-offs, skip next and snooze through the pure core (driver, planner, decision) on a fake
clock, against an oracle: 1,000 seeded random sequences of adds, skips, snoozes, undos, sleeps,
restarts, clocks set back and zone changes. Nothing doubles, no one-off is lost, and a snoozed
run keeps its due."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.model import Hold, Policies, Schedule, SkipReason, WakeReason
from domi_desktop.scheduler.decide import GRACE, FireDecision
from domi_desktop.scheduler.driver import Driver
from domi_desktop.scheduler.oneoff import once_at_from, skip_next, snooze_next
from tests.support.fakes import FakeClock, FakeTimer, MemoryBook, command_schedule

SEQUENCES = 1000
STEPS = 14
ZONES = ("Europe/Riga", "Asia/Shanghai", "America/New_York", "UTC")
KINDS: tuple[str, ...] = (
    "add",
    "add",
    "skip",
    "snooze",
    "snooze",
    "undo",
    "sleep",
    "awake",
    "awake",
    "restart",
)
KINDS += ("back", "zone")
START = datetime(2026, 3, 5, 6, 0, tzinfo=UTC)


class HoldBook(MemoryBook):
    """The memory book that also notes the hold a schedule had when each of its fires was claimed."""

    def __init__(self, *schedules: Schedule) -> None:
        super().__init__(*schedules)
        self.holds: list[Hold | None] = []

    def fire(self, decision: FireDecision) -> bool:
        hold = self.schedules[decision.schedule_id].policies.hold
        claimed = super().fire(decision)
        if claimed:
            self.holds.append(hold)
        return claimed


@dataclass
class World:
    book: HoldBook
    clock: FakeClock
    timer: FakeTimer
    driver: Driver
    one_offs: dict[int, datetime] = field(default_factory=dict)
    next_id: int = 10

    def edit(self, schedule: Schedule) -> None:
        self.book.schedules[schedule.id] = schedule
        self.driver.reload(schedule.id)


def start(book: HoldBook, clock: FakeClock, timer: FakeTimer) -> Driver:
    driver = Driver(clock, timer, book, book)
    driver.start()
    return driver


def step(world: World, rng: random.Random, monkeypatch: pytest.MonkeyPatch) -> None:
    clock, book = world.clock, world.book
    now = clock.now()
    kind = rng.choice(KINDS)
    if kind == "add":
        wall = (now + timedelta(minutes=rng.randrange(2, 3 * 24 * 60))).replace(tzinfo=None)
        tz = rng.choice(("local", *ZONES))
        try:
            at, expr = once_at_from(wall, tz, now)
        except ValueError:
            return  # read in that zone the time has passed: refused, as the CLI does
        sid, world.next_id = world.next_id, world.next_id + 1
        schedule = replace(command_schedule(expr, tz, now, schedule_id=sid), policies=_once(at))
        book.decided.setdefault(sid, set()).add(now)
        world.one_offs[sid] = at
        world.edit(schedule)
    elif kind in ("skip", "snooze", "undo"):
        schedule = book.schedules[rng.choice(sorted(book.schedules))]
        try:
            if kind == "skip":
                hold: Hold | None = skip_next(schedule, now)
            elif kind == "snooze":
                span = timedelta(minutes=rng.choice((5, 30, 60, 180, 600)))
                hold = snooze_next(schedule, now, span)
            else:
                hold = None
        except ValueError:
            return  # a one-off that is done
        world.edit(replace(schedule, policies=replace(schedule.policies, hold=hold)))
    elif kind == "sleep":
        clock.sleep_machine(timedelta(minutes=rng.randrange(1, 4 * 24 * 60)))
        world.driver.wake(WakeReason.resume)
    elif kind == "awake":
        world.timer.advance(timedelta(minutes=rng.randrange(1, 90)))
    elif kind == "restart":
        world.driver.stop()
        world.driver = start(book, clock, world.timer)
    elif kind == "back":
        clock.set_wall(now - timedelta(minutes=rng.randrange(1, 6 * 60)))
        world.driver.wake(WakeReason.clock_jump)
    else:
        monkeypatch.setenv("TZ", rng.choice(ZONES))
        world.driver.wake(WakeReason.tz_change)


def _once(at: datetime) -> Policies:
    return Policies(once_at=at)


def check(world: World) -> None:
    book = world.book
    decided = Counter((d.schedule_id, d.due) for d in book.fired)
    doubled = [key for key, count in decided.items() if count > 1]
    assert not doubled, f"decided twice: {doubled}"
    for sid, at in world.one_offs.items():
        mine = [d for d in book.fired if d.schedule_id == sid]
        assert [d.due for d in mine] == [at], f"one-off {sid} at {at}: {mine}"
    for decision, hold in zip(book.fired, book.holds, strict=True):
        held = hold is not None and hold.due == decision.due
        if held and hold is not None and hold.skip:
            assert not decision.run and decision.skip_reason is SkipReason.you_skipped
            continue
        assert decision.run, decision
        if held and hold is not None and hold.until is not None:
            assert decision.fired_at >= hold.until
            assert decision.late is (decision.fired_at - decision.due > GRACE)


def test_random_sequences_never_double_never_lose_a_one_off_and_snoozes_keep_their_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(20261207)
    snoozed_late = skipped = one_offs = 0
    for _ in range(SEQUENCES):
        monkeypatch.setenv("TZ", rng.choice(ZONES))
        clock = FakeClock(START + timedelta(minutes=rng.randrange(0, 365 * 24 * 60)))
        timer = FakeTimer(clock)
        book = HoldBook(
            command_schedule("0 9 * * *", "local", clock.now(), schedule_id=1),
            command_schedule("*/30 * * * *", "Europe/Riga", clock.now(), schedule_id=2),
        )
        world = World(book, clock, timer, start(book, clock, timer))
        for _ in range(STEPS):
            step(world, rng, monkeypatch)
        # At last the machine stays off past every one-off and comes back: all are decided.
        clock.sleep_machine(timedelta(days=8))
        world.driver.wake(WakeReason.resume)
        world.timer.advance(timedelta(minutes=2))
        check(world)
        world.driver.stop()
        one_offs += len(world.one_offs)
        skipped += sum(d.skip_reason is SkipReason.you_skipped for d in book.fired)
        snoozed_late += sum(
            h is not None and h.until is not None and h.due == d.due and d.late
            for d, h in zip(book.fired, book.holds, strict=True)
        )
    # The sequences reach what they test, not only the quiet paths.
    assert one_offs > 1000 and skipped > 100 and snoozed_late > 100, (
        one_offs,
        skipped,
        snoozed_late,
    )
