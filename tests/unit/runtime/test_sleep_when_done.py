"""Sleep when done: asleep once after the last running job ends, never when someone used the
computer meanwhile or when cancelled; with fakes for the input watch and the sleeper."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from domi_desktop.events import RunFinished
from domi_desktop.model import RunStatus
from domi_desktop.runtime.sleep_when_done import LEAVE, SleepWhenDone
from domi_desktop.runtime.waking import NoWakeAlarm, WakeTools

NOW = datetime(2026, 12, 7, 22, 0, tzinfo=UTC)


class Watch:
    def __init__(self, touched: bool | None = False) -> None:
        self.touched, self.marks = touched, 0
        self.asked: list[datetime] = []

    @property
    def status(self) -> str:
        return "a fake"

    def mark(self) -> None:
        self.marks += 1

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        self.asked.append(woke_at)
        return self.touched


class Sleeper:
    def __init__(self) -> None:
        self.calls = 0

    @property
    def status(self) -> str:
        return "a fake"

    def sleep(self) -> bool:
        self.calls += 1
        return True


def finished(run_id: int) -> RunFinished:
    return RunFinished(run_id, 1, "Backup", RunStatus.succeeded, None, 0, timedelta(seconds=5))


def made(running: list[int], watch: Watch, sleeper: Sleeper) -> SleepWhenDone:
    tools = WakeTools(NoWakeAlarm("none"), watch, sleeper)

    def soon(callback: Callable[[], None]) -> None:
        callback()  # the loop's next turn, here at once: the lanes are already free

    return SleepWhenDone(lambda: running, lambda: tools, lambda: NOW, soon)


def test_it_sleeps_once_after_the_last_running_job_ends() -> None:
    running, watch, sleeper = [1, 2], Watch(touched=False), Sleeper()
    done = made(running, watch, sleeper)
    done.set(True)
    assert sleeper.calls == 0 and watch.marks == 1
    running.remove(1)
    done.observe(finished(1))
    assert sleeper.calls == 0  # one still runs
    running.remove(2)
    done.observe(finished(2))
    done.observe(finished(3))
    assert sleeper.calls == 1 and done.armed_at is None
    assert watch.asked == [NOW + LEAVE]  # input while walking away does not count


def test_with_nothing_running_it_sleeps_at_once() -> None:
    sleeper = Sleeper()
    made([], Watch(touched=False), sleeper).set(True)
    assert sleeper.calls == 1


def test_input_meanwhile_or_not_knowing_keeps_it_awake() -> None:
    for touched in (True, None):
        running, sleeper = [1], Sleeper()
        done = made(running, Watch(touched=touched), sleeper)
        done.set(True)
        running.clear()
        done.observe(finished(1))
        assert sleeper.calls == 0 and "stays awake" in done.outcome


def test_cancelled_it_does_not_sleep() -> None:
    running, sleeper = [1], Sleeper()
    done = made(running, Watch(touched=False), sleeper)
    done.set(True)
    done.set(False)
    running.clear()
    done.observe(finished(1))
    assert sleeper.calls == 0 and done.outcome == "cancelled"
