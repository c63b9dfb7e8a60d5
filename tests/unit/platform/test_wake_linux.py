"""Linux wake alarms and what sends a woken machine back to sleep, without a bus: the real timerfd
(CLOCK_REALTIME_ALARM; root here holds CAP_WAKE_ALARM, and capsh takes it away), the RTC's
``wakealarm`` and ``/sys/power/state`` as temp files, ``/proc/interrupts`` as the real one and as
a written one."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.platform.wake import wake_alarm_for_platform, wake_tools_for_platform
from domi_desktop.platform.wake.base import epoch_seconds, has_capability
from domi_desktop.platform.wake.linux import (
    CHOICE_VARIABLE,
    RtcWakeAlarm,
    TimerfdWakeAlarm,
    linux_wake_alarm,
)
from domi_desktop.platform.wake.presence import (
    EV_KEY,
    EV_REL,
    EV_SYN,
    EVENT,
    SYN_DROPPED,
    EvdevInputWatch,
    linux_input_watch,
)
from domi_desktop.platform.wake.sleeper import PowerStateSleeper, linux_sleeper
from domi_desktop.platform.wake.systemd import calendar_text
from domi_desktop.runtime.waking import NoWakeAlarm

pytestmark = pytest.mark.linux_only

SOON = datetime.now(UTC) + timedelta(minutes=10)


def test_an_alarm_never_rings_early_a_fraction_of_a_second_rounds_up() -> None:
    moment = datetime(2026, 12, 2, 2, 59, 29, 1000, tzinfo=UTC)
    assert epoch_seconds(moment) == int(datetime(2026, 12, 2, 2, 59, 30, tzinfo=UTC).timestamp())
    assert calendar_text(moment) == "2026-12-02 02:59:30 UTC"


def test_systemd_reads_the_calendar_text_as_the_instant_meant() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail(
            "systemd-analyze is missing (Debian's systemd: make system-deps)", pytrace=False
        )
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3, seconds=30)
    result = subprocess.run(
        [analyze, "calendar", "--iterations=2", calendar_text(at)],
        capture_output=True, text=True, timeout=60,
        env={"TZ": "America/New_York", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"Normalized form: {calendar_text(at)}\n" in result.stdout
    assert f"(in UTC): {at:%a %Y-%m-%d %H:%M:%S} UTC\n" in result.stdout
    assert "Iter. #2" not in result.stdout  # once only: no second elapse


# -- the RTC -----------------------------------------------------------------------------------


def test_the_rtc_alarm_is_the_epoch_second_written_to_wakealarm(tmp_path: Path) -> None:
    wakealarm = tmp_path / "wakealarm"
    wakealarm.write_text("")
    alarm = RtcWakeAlarm(wakealarm)
    assert alarm.capability() is None
    at = datetime(2026, 12, 2, 2, 59, 30, tzinfo=UTC)
    assert alarm.arm(at)
    assert wakealarm.read_text() == f"{int(at.timestamp())}\n"
    assert alarm.status == "the machine wakes at 2026-12-02 02:59:30 UTC (the RTC alarm)"
    alarm.cancel()
    assert wakealarm.read_text() == "0\n"


def test_a_machine_without_an_rtc_alarm_says_so(tmp_path: Path) -> None:
    alarm = RtcWakeAlarm(tmp_path / "rtc0" / "wakealarm")
    assert alarm.capability() == (
        f"this machine has no RTC alarm ({tmp_path / 'rtc0' / 'wakealarm'} is missing)"
    )
    assert not alarm.arm(SOON)
    assert alarm.status.startswith("cannot arm the RTC alarm: ")


# -- the timerfd -------------------------------------------------------------------------------


def test_a_real_alarm_timer_is_armed_moved_and_taken_back() -> None:
    alarm = TimerfdWakeAlarm()
    if alarm.capability() is not None:
        pytest.fail(f"root here holds CAP_WAKE_ALARM, yet: {alarm.capability()}", pytrace=False)
    at = datetime.now(UTC) + timedelta(hours=1)
    assert alarm.arm(at)
    armed = alarm.armed_at()
    assert armed is not None and abs(armed - epoch_seconds(at)) <= 2
    later = at + timedelta(hours=1)
    assert alarm.arm(later)
    armed = alarm.armed_at()
    assert armed is not None and abs(armed - epoch_seconds(later)) <= 2
    alarm.cancel()
    assert alarm.armed_at() is None
    assert alarm.status == "not armed"


def test_without_cap_wake_alarm_the_timerfd_says_what_would_allow_it() -> None:
    capsh = shutil.which("capsh")
    if capsh is None:
        pytest.fail("capsh is missing (Debian's libcap2-bin: make system-deps)", pytrace=False)
    code = (
        "from domi_desktop.platform.wake.linux import TimerfdWakeAlarm, linux_wake_alarm\n"
        "import json, os\n"
        "os.environ.pop('DBUS_SESSION_BUS_ADDRESS', None)\n"
        "alarm = linux_wake_alarm(rtc=lambda: __import__('domi_desktop.platform.wake.linux',"
        " fromlist=['x']).RtcWakeAlarm(__import__('pathlib').Path('/nonexistent')))\n"
        "print(json.dumps([TimerfdWakeAlarm().capability(), alarm.capability()]))\n"
    )
    result = subprocess.run(
        [capsh, "--drop=cap_wake_alarm", "--", "-c", 'exec "$0" -c "$1"', sys.executable, code],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[3],
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    timerfd, chosen = json.loads(result.stdout)
    assert timerfd.startswith("the app lacks CAP_WAKE_ALARM")
    assert chosen.startswith("systemd: ")
    assert "; timerfd: the app lacks CAP_WAKE_ALARM" in chosen
    assert "; rtc: this machine has no RTC alarm" in chosen


class RefusingLibc:
    def __init__(self, code: int) -> None:
        self.code = code

    def timerfd_create(self, clock: int, flags: int) -> int:
        ctypes.set_errno(self.code)
        return -1


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.EPERM, "the app lacks CAP_WAKE_ALARM"),
        (errno.EINVAL, "this kernel has no alarm timers"),
        (errno.EMFILE, "timerfd_create(CLOCK_REALTIME_ALARM) failed: "),
    ],
)
def test_each_refusal_of_the_kernel_is_said(code: int, said: str) -> None:
    alarm = TimerfdWakeAlarm(lambda: RefusingLibc(code))
    why = alarm.capability()
    assert why is not None and why.startswith(said)
    assert not alarm.arm(SOON)
    assert alarm.status.startswith(f"cannot arm a CLOCK_REALTIME_ALARM timer: {said}")


# -- choosing ----------------------------------------------------------------------------------


class Able:
    via = "able"

    def __init__(self, why: str | None = None) -> None:
        self.why = why

    def capability(self) -> str | None:
        return self.why


def test_the_first_way_that_works_is_taken_in_order() -> None:
    made: list[str] = []

    def maker(name: str, why: str | None) -> Any:
        def make() -> Able:
            made.append(name)
            return Able(why)

        return make

    chosen = linux_wake_alarm(
        {},
        systemd=maker("systemd", "systemd 252"),
        timerfd=maker("timerfd", None),
        rtc=maker("rtc", None),
    )
    assert made == ["systemd", "timerfd"]
    assert isinstance(chosen, Able)


def test_none_that_works_gives_every_reason() -> None:
    chosen = linux_wake_alarm(
        {}, systemd=lambda: Able("a"), timerfd=lambda: Able("b"), rtc=lambda: Able("c")
    )
    assert isinstance(chosen, NoWakeAlarm)
    assert chosen.capability() == "systemd: a; timerfd: b; rtc: c"
    assert not chosen.arm(SOON)


def test_the_environment_picks_one_on_purpose(tmp_path: Path) -> None:
    wakealarm = tmp_path / "wakealarm"
    wakealarm.write_text("")
    chosen = linux_wake_alarm(
        {CHOICE_VARIABLE: "rtc"},
        systemd=lambda: pytest.fail("not asked"),
        timerfd=lambda: pytest.fail("not asked"),
        rtc=lambda: RtcWakeAlarm(wakealarm),
    )
    assert isinstance(chosen, RtcWakeAlarm)
    off = linux_wake_alarm({CHOICE_VARIABLE: "none"})
    assert off.capability() == "DOMI_WAKE_ALARM=none: waking the machine is turned off"


def test_macos_needs_the_privileged_helper_and_says_so() -> None:
    why = wake_alarm_for_platform("darwin").capability()
    assert why is not None and why.startswith("waking a Mac needs the privileged helper")
    assert wake_alarm_for_platform("sunos5").capability() == (
        "cannot wake sunos5: no wake alarm for this OS"
    )


def test_the_capability_bit_is_read_from_proc(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "status").write_text("Name:\tx\nCapEff:\t0000000800000000\n")
    (tmp_path / "8").mkdir()
    (tmp_path / "8" / "status").write_text("Name:\tx\nCapEff:\t00000007ffffffff\n")
    assert has_capability(7, 35, tmp_path) is True
    assert has_capability(8, 35, tmp_path) is False
    assert has_capability(9, 35, tmp_path) is None


# -- input and sleep without logind ------------------------------------------------------------

EV_MSC, EV_LED = 4, 17


def event(kind: int, code: int = 0, value: int = 0) -> bytes:
    return EVENT.pack(1_700_000_000, 0, kind, code, value)


@pytest.fixture
def devices(tmp_path: Path) -> Path:
    """Two event devices as FIFOs: a stream the kernel would queue for each reader."""
    folder = tmp_path / "input"
    folder.mkdir()
    for name in ("event0", "event1", "mouse0"):
        os.mkfifo(folder / name)
    return folder


@pytest.fixture
def evdev(devices: Path) -> Iterator[EvdevInputWatch]:
    watch = EvdevInputWatch(devices)
    yield watch
    watch.close()


def send(device: Path, *events: bytes) -> None:
    fd = os.open(device, os.O_WRONLY | os.O_NONBLOCK)  # the watch holds it open for reading
    try:
        os.write(fd, b"".join(events))
    finally:
        os.close(fd)


def test_input_is_a_key_a_motion_or_a_touch_never_the_device_s_own_traffic(
    devices: Path, evdev: EvdevInputWatch
) -> None:
    assert evdev.input_since_mark(SOON) is None  # never marked: cannot tell
    evdev.mark()
    assert evdev.status == f"watching 2 input device(s) in {devices}"
    # What a resume's reset of the keyboard does: its LEDs and scan codes, no key.
    send(devices / "event0", event(EV_LED, 0, 1), event(EV_MSC, 4, 0x1C), event(EV_SYN))
    assert evdev.input_since_mark(SOON) is False
    send(devices / "event1", event(EV_REL, 0, 3), event(EV_SYN))
    assert evdev.input_since_mark(SOON) is True
    assert evdev.input_since_mark(SOON) is True  # said until the next mark
    assert evdev.status == "input since the mark: event1"
    evdev.mark()
    assert evdev.input_since_mark(SOON) is False


def test_input_queued_before_the_mark_is_not_counted_and_an_overflow_is(
    devices: Path, evdev: EvdevInputWatch
) -> None:
    evdev.mark()
    send(devices / "event0", event(EV_KEY, 30, 1), event(EV_SYN))
    evdev.mark()  # the last look before the sleep
    assert evdev.input_since_mark(SOON) is False
    send(devices / "event0", event(EV_SYN, SYN_DROPPED))  # the reader's queue overflowed
    assert evdev.input_since_mark(SOON) is True


def test_without_logind_input_is_read_from_the_input_devices(
    tmp_path: Path, devices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    assert isinstance(linux_input_watch(devices), EvdevInputWatch)
    watch = linux_input_watch(tmp_path / "nothing")
    assert watch.input_since_mark(SOON) is None
    assert watch.status.startswith("no logind session, and no input device in ")


def test_without_logind_a_root_machine_sleeps_by_writing_mem_to_power_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    state = tmp_path / "state"
    assert linux_sleeper(state) is None  # no such file: no way
    state.write_text("freeze mem disk\n")
    sleeper = linux_sleeper(state)
    assert isinstance(sleeper, PowerStateSleeper)
    assert sleeper.sleep()
    sleeper.join(30)
    assert state.read_text() == "mem\n"
    assert sleeper.status == f"suspended through {state}, and resumed"


def test_a_refused_write_to_power_state_is_said(tmp_path: Path) -> None:
    sleeper = PowerStateSleeper(tmp_path / "missing" / "state")
    assert sleeper.sleep()  # on its thread: the write returns only after a real resume
    sleeper.join(30)
    assert sleeper.status.startswith(f"cannot write mem to {tmp_path / 'missing' / 'state'}: ")


def test_the_tools_of_this_machine_are_found_without_any_bus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    started = time.monotonic()
    tools = wake_tools_for_platform("linux")
    assert time.monotonic() - started < 30  # no bus to wait for
    # Root here: the alarm timer (this container has no RTC and no session bus).
    assert isinstance(tools.alarm, TimerfdWakeAlarm)
    assert tools.watch is not None and tools.watch.input_since_mark(SOON) is None
