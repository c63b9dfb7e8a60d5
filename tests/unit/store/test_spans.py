"""The machine's story in the store, written as the app writes it (the diary, through the engine's
recorder, on its own connection), on SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import CommandAction, FireClaim, RunStatus, Trigger
from domi_desktop.runtime.diary import GAP, HEARTBEAT, Diary
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.store import Store, retention
from domi_desktop.story import Parsed, Sleep, SpanKind, SpanSource
from tests.support.fakes import FakeClock, FakeLoop
from tests.unit.store.conftest import NOW

Span = tuple[SpanKind, datetime, datetime, SpanSource]
WEEK = timedelta(days=7)


class App:
    """One life of the app on this machine: its store, recorder and diary, on a fake clock."""

    def __init__(self, data_dir: Path, clock: FakeClock, machine: str = "laptop") -> None:
        self.clock = clock
        self.store = Store.open(data_dir, now=clock.now(), machine=machine)
        self.recorder = Recorder(self.store, FakeLoop(clock), threaded=False)
        self.diary = Diary(self.store, clock, self.recorder)

    def close(self) -> None:
        self.recorder.close()
        self.store.close()

    def story(self, machine: str | None = None) -> list[Span]:
        found = self.store.machine_spans(NOW - WEEK, NOW + WEEK, machine)
        return [(span.kind, span.start, span.end, span.source) for span in found]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def app_on(data_dir: Path) -> Iterator[Callable[..., App]]:
    opened: list[App] = []

    def open_app(clock: FakeClock, machine: str = "laptop") -> App:
        app = App(data_dir, clock, machine)
        opened.append(app)
        return app

    yield open_app
    for app in opened:
        app.close()


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def sleep_once(app: App, clock: FakeClock, awake: timedelta, asleep: timedelta) -> App:
    """The app starts, the machine is awake for ``awake``, then sleeps ``asleep`` between the
    OS's two signals."""
    app.diary.start()
    clock.advance(awake)
    app.diary.tick()
    app.diary.sleeping()
    clock.sleep_machine(asleep)
    app.diary.resumed()
    return app


def test_a_sleep_the_os_announced_runs_from_its_signal_to_the_wake(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = sleep_once(app_on(clock), clock, minutes(30), timedelta(hours=8))
    app.diary.tick()  # the clock gap the resume signal already told: no second sleep

    slept = NOW + minutes(30)
    woke = slept + timedelta(hours=8)
    assert app.story() == [
        (SpanKind.awake, NOW, slept, SpanSource.app),
        (SpanKind.asleep, slept, woke, SpanSource.signal),
        (SpanKind.awake, woke, woke, SpanSource.app),
    ]


def test_with_no_signal_the_clock_gap_dates_the_sleep_from_the_last_heartbeat(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    app.diary.start()
    for _ in range(10):
        clock.advance(minutes(1))
        app.diary.tick()
    clock.sleep_machine(timedelta(hours=2))
    clock.advance(minutes(1))
    app.diary.tick()
    app.diary.resumed()  # a late resume signal for the same wake

    last_seen = NOW + minutes(10)
    woke = last_seen + timedelta(hours=2, minutes=1)
    kinds = app.story()
    assert kinds[0] == (SpanKind.awake, NOW, last_seen, SpanSource.app)
    assert kinds[1] == (SpanKind.asleep, last_seen, woke, SpanSource.gap)
    assert [kind for kind, *_ in kinds] == [SpanKind.awake, SpanKind.asleep, SpanKind.awake]


def test_with_a_boot_clock_a_wall_clock_set_forward_is_no_sleep(
    clock: FakeClock, data_dir: Path
) -> None:
    """Linux's CLOCK_BOOTTIME runs on through a sleep, not through a clock set forward."""
    slept = [0.0]
    store = Store.open(data_dir, now=clock.now(), machine="laptop")
    recorder = Recorder(store, FakeLoop(clock), threaded=False)
    diary = Diary(store, clock, recorder, boot_clock=lambda: clock.monotonic() + slept[0])
    try:
        diary.start()
        clock.advance(minutes(1))
        diary.tick()
        clock.set_wall(clock.now() + timedelta(hours=2))  # NTP, or the user: no sleep
        clock.advance(minutes(1))
        diary.tick()
        clock.sleep_machine(timedelta(hours=1))  # a real sleep: the boot clock ran on
        slept[0] += 3600
        clock.advance(minutes(1))
        diary.tick()
        found = store.machine_spans(NOW - WEEK, NOW + WEEK)
        asleep = [span for span in found if span.kind is SpanKind.asleep]
        assert [(span.source, span.end - span.start) for span in asleep] == [
            (SpanSource.gap, timedelta(hours=1, minutes=1))
        ]
    finally:
        recorder.close()
        store.close()


def test_a_lost_wake_signal_is_the_next_wake_of_the_scheduler(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    app.diary.start()
    clock.advance(minutes(1))
    app.diary.sleeping()
    clock.sleep_machine(timedelta(hours=1))
    clock.advance(minutes(1))
    app.diary.tick()  # the timer fired: awake, whatever the bus said or did not say

    slept = NOW + minutes(1)
    woke = slept + timedelta(hours=1, minutes=1)
    assert app.story()[1:] == [
        (SpanKind.asleep, slept, woke, SpanSource.signal),
        (SpanKind.awake, woke, woke, SpanSource.app),
    ]
    clock.advance(timedelta(seconds=HEARTBEAT))
    app.diary.tick()
    assert app.story()[-1][2] == woke + timedelta(seconds=HEARTBEAT)  # heartbeats go on


def test_a_clock_that_drifts_a_little_is_not_a_sleep(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    app.diary.start()
    clock.advance(minutes(1))
    clock.sleep_machine(timedelta(seconds=GAP / 2))  # NTP slewing, a slow timer
    app.diary.tick()
    assert [kind for kind, *_ in app.story()] == [SpanKind.awake]


def test_heartbeats_are_written_rarely_and_a_crash_ends_awake_at_the_last_one(
    data_dir: Path, clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    app.diary.start()
    for _ in range(12):  # twelve wakes a minute apart: two heartbeats written, at 5 and 10 min
        clock.advance(minutes(1))
        app.diary.tick()
    assert app.story() == [(SpanKind.awake, NOW, NOW + minutes(10), SpanSource.app)]
    assert HEARTBEAT == 300.0
    app.close()  # killed: no stop() was written

    clock.advance(timedelta(hours=1))
    again = app_on(clock)
    again.diary.start()
    restart = NOW + minutes(72)
    assert again.story() == [
        (SpanKind.awake, NOW, NOW + minutes(10), SpanSource.app),
        (SpanKind.off, NOW + minutes(10), restart, SpanSource.crash),
        (SpanKind.awake, restart, restart, SpanSource.app),
    ]


def test_a_quit_is_off_from_the_stop_to_the_next_start(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    app.diary.start()
    clock.advance(minutes(2))
    app.diary.stop()
    app.close()
    clock.advance(timedelta(hours=3))
    again = app_on(clock)
    again.diary.start()
    back = NOW + timedelta(hours=3, minutes=2)
    assert again.story()[:2] == [
        (SpanKind.awake, NOW, NOW + minutes(2), SpanSource.app),
        (SpanKind.off, NOW + minutes(2), back, SpanSource.quit),
    ]


def test_each_machine_of_a_shared_store_keeps_its_own_story(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    laptop = app_on(clock, "laptop")
    laptop.diary.start()
    clock.advance(minutes(1))
    laptop.diary.sleeping()
    laptop.close()
    desktop = app_on(clock, "desktop")
    desktop.diary.start()
    assert [kind for kind, *_ in desktop.story()] == [SpanKind.awake]
    assert [kind for kind, *_ in desktop.story("laptop")] == [SpanKind.awake, SpanKind.asleep]


def test_the_os_back_fill_adds_only_the_sleeps_the_app_did_not_record(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = sleep_once(app_on(clock), clock, minutes(1), timedelta(hours=1))
    own = Sleep(
        NOW
        + minutes(
            1,
        ),
        NOW + timedelta(hours=1, minutes=1),
    )
    before = Sleep(NOW - timedelta(days=2), NOW - timedelta(days=1, hours=16))
    app.diary.back_fill(Parsed((before, own, before), ("a note",)), SpanSource.journal)
    app.diary.back_fill(Parsed((before,), ()), SpanSource.journal)  # the next start reads it again

    asleep = [(s, e, src) for kind, s, e, src in app.story() if kind is SpanKind.asleep]
    assert asleep == [
        (before.start, before.end, SpanSource.journal),
        (own.start, own.end, SpanSource.signal),
    ]


def test_spans_older_than_the_runs_kept_are_pruned_but_not_the_open_one(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    app = app_on(clock)
    old = Sleep(
        NOW - retention.MAX_AGE - timedelta(days=2), NOW - retention.MAX_AGE - timedelta(days=1)
    )
    app.diary.back_fill(Parsed((old,), ()), SpanSource.pmset)
    app.diary.start()  # prunes once as it starts
    found = app.store.machine_spans(NOW - 2 * retention.MAX_AGE, NOW + WEEK)
    assert [span.kind for span in found] == [SpanKind.awake]


def test_the_timeline_reads_runs_spans_and_dues_alike_on_both_backends(
    clock: FakeClock, app_on: Callable[..., App]
) -> None:
    store = sleep_once(app_on(clock), clock, minutes(1), timedelta(hours=3)).store
    schedule = store.create_schedule(
        "hourly", "0 * * * *", "UTC", CommandAction(argv=("true",)), now=NOW - timedelta(hours=1)
    )
    due = NOW + timedelta(hours=3)
    run_id = store.claim_fire(
        FireClaim(
            schedule.id, schedule.last_due, due, clock.now(), trigger=Trigger.catch_up,
            late=True, missed_count=2, skipped=(NOW + timedelta(hours=1), NOW + timedelta(hours=2)),
        )
    )  # fmt: skip
    assert run_id is not None
    store.start_run(run_id, clock.now())
    store.finish_run(run_id, status=RunStatus.succeeded, finished_at=clock.now(), exit_code=0)

    timeline = store.timeline(NOW, NOW + timedelta(hours=4), clock.now())
    [lane] = timeline.lanes
    assert [story.kind.value for story in lane.stories] == ["missed", "missed", "late"]
    missed = lane.stories[0]
    assert missed.cause is not None and missed.cause.kind is SpanKind.asleep
    assert missed.served_by is not None and missed.served_by.id == run_id
    assert lane.stories[2].run.late is True  # a bool on both backends
    assert store.due_story(missed.run, clock.now()) == missed  # History's read tells the same


def test_a_hand_edited_span_that_cannot_be_read_is_passed_over(
    clock: FakeClock, app_on: Callable[..., App], sql: Callable[..., list[tuple[object, ...]]]
) -> None:
    app = app_on(clock)
    app.diary.start()
    stamp = int(NOW.timestamp() * 1_000_000)
    sql(
        "INSERT INTO machine_spans (machine, kind, started_at, ended_at, source, is_open) "
        "VALUES ('laptop', 'hibernating', ?, ?, 'app', ?)",
        stamp - 10,
        stamp + 10,
        False,
    )
    assert [kind for kind, *_ in app.story()] == [SpanKind.awake]
