"""Wake to run at the runtime: the alarm follows edits, resumes, conditions and fires;
a woken run says so in its history; the machine goes back to sleep after it unless someone used it.
A fake clock, a fake alarm, input watch and sleeper; real SQLite and real job processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.model import (
    CommandAction,
    Conditions,
    NetworkState,
    Policies,
    RunStatus,
    Schedule,
    SystemState,
    WakeReason,
)
from domi_desktop.runtime.waking import HOLD_WHY, SETTLE, WOKE_NOTE, WakeTools
from domi_desktop.store import Store
from tests.support.runtime import START, RuntimeHarness, harnesses

MAINS = SystemState()
BATTERY = SystemState(on_ac=False, battery_percent=80)


def add(h: RuntimeHarness, expr: str, *, wake: bool = True, **conditions: Any) -> Schedule:
    return h.add(expr, wake_to_run=wake, conditions=Conditions(**conditions))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


@pytest.fixture
def make(store: Store) -> Iterator[Callable[..., RuntimeHarness]]:
    with harnesses(store, state=MAINS, watches=False, hold_sleep=False, waking=True) as build:
        yield build


def at(hour: int, minute: int = 0, second: int = 0, day: int = 5) -> datetime:
    return datetime(2024, 6, day, hour, minute, second, tzinfo=UTC)


def test_it_arms_the_alarm_at_start_and_again_on_every_edit(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    job = add(h, "0 11 * * *")
    add(h, "0 9 * * *", wake=False)  # sooner, but it does not ask for a wake
    h.start()
    assert h.alarm.armed == at(10, 59, 30)
    assert h.keeper.describe() == {
        "at": "2024-06-05T10:59:30+00:00", "due": "2024-06-05T11:00:00+00:00",
        "schedules": [job.id], "alarm": "fake alarm", "woken": False, "slept": 0,
    }  # fmt: skip
    job = h.edit(job, expr="30 11 * * *")
    assert h.alarm.armed == at(11, 29, 30)
    h.edit(job, enabled=False)
    assert h.alarm.armed is None


def test_input_is_watched_from_the_moment_the_alarm_is_armed(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    h.start()
    assert h.watch.marks == 0  # nothing to wake for
    job = add(h, "0 11 * * *")
    h.runtime.schedule_changed(job.id)
    assert h.watch.marks == 1  # the lid may close before the scheduler's next tick


def test_the_os_is_told_only_when_the_instant_changes(make: Callable[..., RuntimeHarness]) -> None:
    h = make()
    add(h, "0 11 * * *")
    h.start()
    h.loop.advance(timedelta(minutes=30))  # thirty ticks of the driver
    assert h.alarm.calls == [at(10, 59, 30)]


def test_pausing_everything_cancels_the_alarm_and_resuming_arms_it(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    add(h, "0 11 * * *")
    h.start()
    h.runtime.driver.set_paused(True)
    assert h.alarm.armed is None
    h.runtime.driver.set_paused(False)
    assert h.alarm.armed == at(10, 59, 30)


def test_an_ac_only_job_on_battery_arms_nothing_until_the_charger_is_back(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make(BATTERY)
    add(h, "0 11 * * *", on_ac_power=True)
    h.start()
    assert h.alarm.armed is None
    h.source.state = MAINS
    h.loop.advance(timedelta(seconds=61))  # the driver's next tick reads the state again
    assert h.alarm.armed == at(10, 59, 30)


def test_a_woken_run_says_so_the_alarm_moves_on_and_the_machine_sleeps_again(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.sleep_until(at(10, 59, 31))  # the alarm rang
    assert h.keeper.woken is not None
    assert (h.inhibitor.held, h.inhibitor.acquired) == (1, [HOLD_WHY])  # the OS may not sleep it
    # The due is still ahead: should it sleep again before, the alarm wakes it at the due.
    assert h.alarm.armed == at(11)
    h.loop.advance(timedelta(seconds=29))  # 11:00: the due
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.succeeded
    assert run.reason == WOKE_NOTE
    assert h.alarm.armed == at(10, 59, 30, day=6)  # tomorrow's, after the fire
    assert h.sleeper.slept == []
    assert h.inhibitor.held == 0  # let go with the run's end: before logind is asked
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1
    assert h.keeper.woken is None


def test_not_when_input_arrived_since_the_wake(make: Callable[..., RuntimeHarness]) -> None:
    h = make()
    add(h, "0 11 * * *")
    h.start()
    h.sleep_until(at(10, 59, 40))
    h.watch.touched = True
    h.loop.advance(timedelta(seconds=20))
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    h.loop.advance(timedelta(minutes=5))
    assert h.sleeper.slept == []
    assert h.keeper.woken is None


def test_not_when_it_cannot_tell_whether_someone_used_the_machine(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    add(h, "0 11 * * *")
    h.start()
    h.sleep_until(at(10, 59, 40))
    h.watch.touched = None
    h.loop.advance(timedelta(seconds=20))
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    h.loop.advance(timedelta(minutes=5))
    assert h.sleeper.slept == []


def test_a_resume_before_the_armed_instant_is_not_a_wake_of_ours(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.sleep_until(at(10, 40))  # the person opened the lid
    assert h.keeper.woken is None
    h.loop.advance(timedelta(minutes=20, seconds=1))
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.reason is None
    h.loop.advance(timedelta(minutes=5))
    assert h.sleeper.slept == []


def test_a_job_that_was_not_woken_for_is_waited_for_but_not_noted(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    woken = add(h, "0 11 * * *")
    other = add(h, "0 11 * * *", wake=False)  # due at the same instant, without a wake of its own
    h.start()
    h.sleep_until(at(10, 59, 45))
    h.loop.advance(timedelta(seconds=15))
    h.drain_until(lambda: len(h.kinds("run.finished")) == 2, timeout=60)
    assert h.store.runs(schedule_id=woken.id)[0].reason == WOKE_NOTE
    assert h.store.runs(schedule_id=other.id)[0].reason is None
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1


def kept_up_after_the_first(h: RuntimeHarness, then: str) -> None:
    """A woken 11:00 job, and another wake (``then``) too near to sleep before it once it ends."""
    add(h, "0 11 * * *")
    add(h, then)
    h.start()
    h.sleep_until(at(10, 59, 45))
    h.loop.advance(timedelta(seconds=15))
    h.drain_until(lambda: len(h.kinds("run.finished")) == 1, timeout=60)
    h.loop.advance(timedelta(seconds=SETTLE))
    assert h.sleeper.slept == []
    assert h.inhibitor.held == 1  # held again for the next


def test_a_next_wake_minutes_away_keeps_the_machine_up_for_it(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    kept_up_after_the_first(h, "1 11 * * *")  # its wake at 11:00:30
    h.loop.advance(timedelta(seconds=55))  # 11:01
    h.drain_until(lambda: len(h.kinds("run.finished")) == 2, timeout=60)
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1
    second = [r for r in h.store.runs() if r.due == at(11, 1)]
    assert second[0].reason is None  # the machine was awake already


def test_a_machine_kept_up_for_a_near_wake_but_put_to_sleep_is_woken_for_it_and_says_so(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    kept_up_after_the_first(h, "2 11 * * *")  # its wake at 11:01:30
    h.sleep_until(at(11, 1, 31))  # the lid was closed all the same, and the alarm woke it
    h.loop.advance(timedelta(seconds=29))
    h.drain_until(lambda: len(h.kinds("run.finished")) == 2, timeout=60)
    assert [r.reason for r in h.store.runs() if r.due == at(11, 2)] == [WOKE_NOTE]
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1


def test_a_machine_put_to_sleep_before_its_last_woken_run_settled_is_woken_again_and_says_so(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    add(h, "0 11 * * *")
    add(h, "2 11 * * *")
    h.start()
    h.sleep_until(at(10, 59, 45))
    h.loop.advance(timedelta(seconds=15))
    h.drain_until(lambda: len(h.kinds("run.finished")) == 1, timeout=60)
    h.sleep_until(at(11, 1, 31))  # the lid closed within SETTLE of the run's end
    h.loop.advance(timedelta(seconds=29))
    h.drain_until(lambda: len(h.kinds("run.finished")) == 2, timeout=60)
    assert [r.reason for r in h.store.runs() if r.due == at(11, 2)] == [WOKE_NOTE]
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1


def test_closing_cancels_the_alarm(make: Callable[..., RuntimeHarness]) -> None:
    h = make()
    add(h, "0 11 * * *")
    h.start()
    h.keeper.close()
    assert h.alarm.armed is None


def test_a_resume_noticed_after_the_due_fires_at_once_and_still_counts_as_woken(
    make: Callable[..., RuntimeHarness],
) -> None:
    # Without logind the resume is seen at the driver's next tick, as a clock jump, up to a minute
    # after the alarm: the due has passed and the same wake fires it.
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.clock.sleep_machine(at(11, 0, 25) - h.clock.now())
    h.wake(WakeReason.clock_jump)
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.reason == WOKE_NOTE and not run.late
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1


def test_a_tick_between_the_alarm_and_the_resume_signal_does_not_lose_the_wake(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.clock.sleep_machine(at(10, 59, 40) - h.clock.now())
    h.wake(WakeReason.timer)  # the driver's own tick came first
    assert h.alarm.armed == at(11)  # moved to the due, should the machine sleep again before
    h.wake(WakeReason.resume)  # then logind's word
    assert h.keeper.woken is not None
    h.loop.advance(timedelta(seconds=20))
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    assert h.store.runs(schedule_id=job.id)[0].reason == WOKE_NOTE


def test_a_change_of_the_os_zone_moves_the_alarm_of_a_local_schedule(
    make: Callable[..., RuntimeHarness],
) -> None:
    zone = {"name": "Europe/Riga"}
    set_local_resolver(lambda: ZoneInfo(zone["name"]))  # the suite's fixture puts the OS's back
    h = make()
    h.store.create_schedule(
        "local", "0 11 * * *", "local", CommandAction(argv=("true",)),
        Policies(wake_to_run=True), now=START,
    )  # fmt: skip
    h.start()
    assert h.alarm.armed == at(7, 59, 30, day=6)  # 11:00 in Riga (UTC+3) passed today
    zone["name"] = "America/New_York"  # the laptop flew west
    h.wake(WakeReason.tz_change)
    assert h.alarm.armed == at(14, 59, 30)  # 11:00 in New York (UTC-4)


def test_a_woken_run_that_waits_for_the_network_is_waited_for_and_says_both(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make(SystemState(network=NetworkState.offline))
    job = add(h, "0 11 * * *", requires_network=True)
    h.start()
    assert h.alarm.armed == at(10, 59, 30)  # the network comes back after a wake
    h.sleep_until(at(10, 59, 45))
    h.loop.advance(timedelta(seconds=15))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting
    h.loop.advance(timedelta(minutes=5))
    assert h.sleeper.slept == []  # not while the woken run waits
    h.source.state = SystemState(network=NetworkState.online)
    h.runtime.keeper.changed()  # what the OS's signal calls
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    run = h.store.get_run(run.id)
    assert run.status is RunStatus.succeeded
    assert run.reason == f"{WOKE_NOTE}; then started after waiting 5 minutes for the network"
    h.loop.advance(timedelta(seconds=SETTLE))
    assert len(h.sleeper.slept) == 1


def test_an_os_that_fails_to_give_its_tools_never_stops_the_scheduler(
    make: Callable[..., RuntimeHarness], caplog: pytest.LogCaptureFixture
) -> None:
    h = make()
    job = add(h, "0 10 * * *", wake=False)
    add(h, "0 11 * * *")

    def broken() -> WakeTools:
        raise OSError("no /proc here")

    h.keeper._make_tools = broken
    h.start()
    h.loop.advance(timedelta(days=1, seconds=1))  # 11:00 today and 10:00 tomorrow
    h.drain_until(lambda: len(h.kinds("run.finished")) == 2, timeout=60)
    assert [r.status for r in h.store.runs(schedule_id=job.id)] == [RunStatus.succeeded]
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.getMessage() for r in errors] == ["cannot tell how to wake this machine"]  # once
    assert h.keeper.describe()["alarm"] == "cannot tell how to wake this machine: no /proc here"


def test_a_resume_long_after_the_alarm_is_a_person_s_and_its_run_does_not_say_woken(
    make: Callable[..., RuntimeHarness],
) -> None:
    # The alarm did not ring (wake timers off, a dead battery); the lid opened at 11:05.
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.sleep_until(at(11, 5))
    assert h.keeper.woken is None
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.late and run.reason is None


def test_a_machine_that_slept_again_before_the_due_is_woken_at_the_due_and_that_is_ours(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    job = add(h, "0 11 * * *")
    h.start()
    h.clock.sleep_machine(at(10, 59, 40) - h.clock.now())
    h.wake(WakeReason.timer)  # awake past the instant, with no resume told...
    assert h.alarm.armed == at(11)
    h.clock.sleep_machine(at(11, 1, 30) - h.clock.now())  # ...asleep again; the due's alarm rang
    h.wake(WakeReason.clock_jump)
    assert h.keeper.woken is not None
    h.drain_until(lambda: bool(h.kinds("run.finished")), timeout=60)
    assert h.store.runs(schedule_id=job.id)[0].reason == WOKE_NOTE
