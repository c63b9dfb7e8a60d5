"""Sleep when done against the stand-in logind on a private system bus: ``Suspend`` is called
once after the last job ends, and not when the session says someone used the computer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.events import RunFinished
from domi_desktop.model import RunStatus
from domi_desktop.platform.wake.presence import linux_input_watch
from domi_desktop.platform.wake.sleeper import linux_sleeper
from domi_desktop.runtime.sleep_when_done import SleepWhenDone
from domi_desktop.runtime.waking import NoWakeAlarm, WakeTools
from tests.desktop.harness import FakeLogind

pytestmark = [pytest.mark.gui, pytest.mark.linux_only]


def armed(fake_logind: FakeLogind, running: list[int], now: datetime) -> SleepWhenDone:
    watch = linux_input_watch(Path("/nonexistent/interrupts"))
    sleeper = linux_sleeper(Path("/nonexistent/state"))
    tools = WakeTools(NoWakeAlarm("not needed"), watch, sleeper)

    def soon(callback: Callable[[], None]) -> None:
        callback()

    done = SleepWhenDone(lambda: running, lambda: tools, lambda: now, soon)
    done.set(True)
    return done


def end(done: SleepWhenDone, running: list[int], run_id: int) -> None:
    running.remove(run_id)
    done.observe(RunFinished(run_id, 1, "Backup", RunStatus.succeeded, None, 0, timedelta(1)))


def test_logind_suspend_is_called_once_after_the_last_job_ends(fake_logind: FakeLogind) -> None:
    now = datetime.now(UTC)
    fake_logind.set_idle(True, now + timedelta(minutes=5))  # idle once the person walked away
    running = [1, 2]
    done = armed(fake_logind, running, now)
    end(done, running, 1)
    assert fake_logind.calls("Suspend") == []
    end(done, running, 2)
    (call,) = fake_logind.wait_for("Suspend")
    assert call["args"] == [False]
    assert [c["args"] for c in fake_logind.calls("Suspend")] == [[False]]


def test_not_when_someone_came_back_in_between(fake_logind: FakeLogind) -> None:
    now = datetime.now(UTC)
    fake_logind.set_idle(False, now + timedelta(minutes=30))  # in use again
    running = [1]
    done = armed(fake_logind, running, now)
    end(done, running, 1)
    assert fake_logind.calls("Suspend") == [] and "someone used it" in done.outcome
