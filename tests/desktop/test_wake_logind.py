"""Sending a woken machine back to sleep through logind (the fake on the private system bus):
the sleeper's ``Suspend(false)``, the session's idle hint read as "nobody used it", and the whole
of it in the real headless app, whose clock libfaketime moves across a sleep the fake logind
announces."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import CommandAction, Policies, RunStatus
from domi_desktop.platform.wake.presence import LogindInputWatch, linux_input_watch
from domi_desktop.platform.wake.sleeper import LogindSleeper, linux_sleeper
from domi_desktop.runtime.waking import HOLD_WHY, WOKE_NOTE
from domi_desktop.store import Store
from tests.desktop.harness import Child, FakeLogind, Spawn
from tests.support import faketime
from tests.support.fakes import wait_for

pytestmark = [pytest.mark.gui, pytest.mark.linux_only]

WAIT = 60.0
"""Seconds a test waits for what it checks: generous, for loaded machines."""
WOKE_AT = datetime(2026, 3, 2, 2, 59, 35, tzinfo=UTC)


def test_the_sleeper_asks_logind_to_suspend_not_interactively(fake_logind: FakeLogind) -> None:
    sleeper = linux_sleeper(Path("/nonexistent/state"))
    assert isinstance(sleeper, LogindSleeper)
    assert sleeper.sleep()
    (call,) = fake_logind.wait_for("Suspend")
    assert call["args"] == [False]
    assert sleeper.status == "asked logind to suspend"


def test_without_logind_on_the_bus_the_sleeper_says_why(system_bus: str) -> None:
    sleeper = LogindSleeper()
    assert not sleeper.sleep()
    assert sleeper.status.startswith("logind refused Suspend: ")


@pytest.mark.parametrize(
    ("idle", "since", "touched"),
    [
        (True, WOKE_AT - timedelta(hours=1), False),  # idle since before the wake
        (True, WOKE_AT + timedelta(seconds=30), True),  # idle again, after being used
        (False, WOKE_AT - timedelta(hours=1), True),  # in use
        (False, WOKE_AT + timedelta(seconds=30), True),
    ],
)
def test_the_session_s_idle_hint_tells_whether_someone_used_the_machine(
    fake_logind: FakeLogind, idle: bool, since: datetime, touched: bool
) -> None:
    watch = linux_input_watch(Path("/nonexistent/interrupts"))
    assert isinstance(watch, LogindInputWatch)
    fake_logind.set_idle(idle, since)
    watch.mark()
    assert watch.input_since_mark(WOKE_AT) is touched
    assert fake_logind.calls("GetSessionByPID")[-1]["args"] == [watch._pid]


# -- the app itself --------------------------------------------------------------------------

START = datetime(2026, 3, 2, 2, 0, 1, tzinfo=UTC)
DUE = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)


@dataclass
class Laptop:
    clock: faketime.FakeClock
    logind: FakeLogind
    app: Child
    data: Path

    def set_time(self, when: datetime) -> None:
        self.clock.set_offset(when - datetime.now(UTC))

    def said(self, text: str) -> bool:
        return text in self.app.stderr()

    def wake_at(self, when: datetime) -> None:
        """The machine sleeps, and resumes at ``when`` on the app's clock; once the app has taken
        the resume for its wake, its clock is moved on to a second before the due (however long
        a loaded machine took to tell it)."""
        self.logind.prepare_for_sleep(True)
        self.set_time(when)
        self.logind.prepare_for_sleep(False)
        wait_for(lambda: self.said("the machine woke at "), WAIT, "the wake taken for the app's")
        self.set_time(DUE - timedelta(seconds=1))

    def runs(self) -> list[tuple[RunStatus, str | None]]:
        with Store.open(self.data, now=datetime.now(UTC) + self.clock.offset) as store:
            return [(run.status, run.reason) for run in store.runs()]


@pytest.fixture
def laptop(tmp_path: Path, spawn: Spawn, fake_logind: FakeLogind) -> Iterator[Laptop]:
    if faketime.find_library() is None:
        pytest.fail("libfaketime is missing (make system-deps)", pytrace=False)
    clock = faketime.fake_clock(tmp_path)
    data = tmp_path / "data"
    with Store.open(data, now=START) as store:
        store.create_schedule(
            "nightly backup", "0 3 * * *", "UTC", CommandAction(argv=(sys.executable, "-c", "")),
            Policies(wake_to_run=True), now=START,
        )  # fmt: skip
    clock.set_offset(START - datetime.now(UTC))
    app = spawn(
        [sys.executable, "-m", "domi_desktop", "--headless"],
        env={"DOMI_DATA_DIR": str(data), "DOMI_WAKE_ALARM": "timerfd", **clock.env},
    )
    laptop = Laptop(clock, fake_logind, app, data)
    armed = "the machine wakes at 2026-03-02 02:59:30 UTC (a CLOCK_REALTIME_ALARM timer)"
    wait_for(lambda: laptop.said(armed), WAIT, "the wake alarm armed at start")
    yield laptop
    app.stop()


@pytest.mark.slow
def test_after_an_unattended_wake_the_woken_run_says_so_and_logind_is_asked_to_suspend(
    laptop: Laptop,
) -> None:
    laptop.logind.set_idle(True, START)  # idle since long before the sleep
    laptop.wake_at(WOKE_AT)  # the alarm rang at 02:59:30; the resume is told a little later
    wait_for(lambda: laptop.logind.calls("Suspend"), WAIT, "the app asking logind to suspend")
    assert [call["args"] for call in laptop.logind.calls("Suspend")] == [[False]]
    assert laptop.runs() == [(RunStatus.succeeded, WOKE_NOTE)]
    # Held awake through the woken run (an unattended machine is slept again by the OS), and
    # let go before the Suspend (logind refuses one while an inhibitor of ours is open).
    inhibits = [c["args"] for c in laptop.logind.calls("Inhibit") if HOLD_WHY in c["args"]]
    assert inhibits == [["sleep", "domi-desktop", HOLD_WHY, "block"]]
    log = laptop.app.stderr()
    assert log.index(f"sleep allowed again ({HOLD_WHY})") < log.index("back to sleep")
    # The alarm moved on to the next night's run after the fire.
    assert laptop.said("the machine wakes at 2026-03-03 02:59:30 UTC")


@pytest.mark.slow
def test_never_when_someone_used_the_machine_after_the_wake(laptop: Laptop) -> None:
    # A key pressed 5 s after the wake (said before it, so that the app's look at the end of the
    # job cannot come first on a loaded machine).
    laptop.logind.set_idle(False, WOKE_AT + timedelta(seconds=5))
    laptop.wake_at(WOKE_AT)
    wait_for(lambda: laptop.said("the machine stays awake: someone used it"), WAIT, "staying up")
    assert laptop.runs() == [(RunStatus.succeeded, WOKE_NOTE)]
    assert laptop.logind.calls("Suspend") == []
