"""The wake-to-run alarm against Windows itself: the waitable timer the app holds, armed, re-armed
and cancelled through the real kernel32, watched firing (or not) through a wait on its handle.

Whether the timer wakes a sleeping machine is the OS's (and its power plan's) business, which no
test here can put to sleep; what the app does with the timer is seen for real. Under Wine too.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.platform.wake.windows import WaitableTimerWakeAlarm
from tests.support.wine import UNDER_WINE

pytestmark = pytest.mark.windows_only

WAIT_OBJECT_0 = 0
WAIT_TIMEOUT = 0x102
DUPLICATE_SAME_ACCESS = 2
FIRE_TIMEOUT_MS = 120_000
"""How long a timer due in a second may take to be seen firing: Wine is 5-20x slower."""
PAST_DUE_MS = 10_000
"""How long past its due a cancelled timer is watched for a firing that must not come."""


class Kernel32:
    """The calls the test makes to watch the timer, each with its signature."""

    def __init__(self) -> None:
        from ctypes import wintypes

        self.dll = ctypes.WinDLL("kernel32", use_last_error=True)
        self.dll.WaitForSingleObject.argtypes = (wintypes.HANDLE, wintypes.DWORD)
        self.dll.WaitForSingleObject.restype = wintypes.DWORD
        self.dll.GetCurrentProcess.argtypes = ()
        self.dll.GetCurrentProcess.restype = wintypes.HANDLE
        self.dll.DuplicateHandle.argtypes = (
            wintypes.HANDLE, wintypes.HANDLE, wintypes.HANDLE, ctypes.POINTER(wintypes.HANDLE),
            wintypes.DWORD, wintypes.BOOL, wintypes.DWORD,
        )  # fmt: skip
        self.dll.DuplicateHandle.restype = wintypes.BOOL
        self.dll.CloseHandle.argtypes = (wintypes.HANDLE,)
        self.dll.CloseHandle.restype = wintypes.BOOL

    def wait(self, handle: int, milliseconds: int) -> int:
        return int(self.dll.WaitForSingleObject(handle, milliseconds))

    def duplicate(self, handle: int) -> int:
        """Another handle to the same timer, which outlives the app's own being closed."""
        from ctypes import wintypes

        process = self.dll.GetCurrentProcess()
        copy = wintypes.HANDLE()
        assert self.dll.DuplicateHandle(
            process, handle, process, ctypes.byref(copy), 0, False, DUPLICATE_SAME_ACCESS
        ), ctypes.get_last_error()
        assert copy.value is not None
        return copy.value


@pytest.fixture
def alarm() -> Iterator[WaitableTimerWakeAlarm]:
    alarm = WaitableTimerWakeAlarm()
    yield alarm
    alarm.cancel()


def in_(delta: timedelta) -> datetime:
    return datetime.now(UTC) + delta


def timer_of(alarm: WaitableTimerWakeAlarm) -> int:
    # The alarm is its handle (it ends with the process); the test waits on it to see it fire.
    handle = alarm._handle
    assert handle is not None, alarm.status
    return handle


def test_a_re_armed_timer_fires_at_its_new_time_and_re_arming_a_fired_one_resets_it(
    alarm: WaitableTimerWakeAlarm,
) -> None:
    kernel32 = Kernel32()
    assert alarm.arm(in_(timedelta(hours=1))), alarm.status
    assert alarm.status.startswith("the machine wakes at ")
    timer = timer_of(alarm)
    assert kernel32.wait(timer, 0) == WAIT_TIMEOUT  # an hour away: not fired

    assert alarm.arm(in_(timedelta(seconds=1))), alarm.status
    assert timer_of(alarm) == timer  # the same timer, set again: one alarm at a time
    assert kernel32.wait(timer, FIRE_TIMEOUT_MS) == WAIT_OBJECT_0

    # A manual-reset timer stays fired until it is set again: the next arming must reset it.
    assert alarm.arm(in_(timedelta(hours=1))), alarm.status
    assert kernel32.wait(timer, 0) == WAIT_TIMEOUT


def test_a_cancelled_timer_never_fires(alarm: WaitableTimerWakeAlarm) -> None:
    kernel32 = Kernel32()
    assert alarm.arm(in_(timedelta(seconds=2))), alarm.status
    watcher = kernel32.duplicate(timer_of(alarm))
    try:
        alarm.cancel()
        assert alarm.status == "not armed"
        assert kernel32.wait(watcher, 2_000 + PAST_DUE_MS) == WAIT_TIMEOUT
    finally:
        kernel32.dll.CloseHandle(watcher)
    # Armed again after a cancel: a new timer, which fires.
    assert alarm.arm(in_(timedelta(seconds=1))), alarm.status
    assert kernel32.wait(timer_of(alarm), FIRE_TIMEOUT_MS) == WAIT_OBJECT_0


def test_whether_wake_timers_are_allowed_is_said_in_a_sentence_never_raised(
    alarm: WaitableTimerWakeAlarm,
) -> None:
    why_not = alarm.capability()
    if UNDER_WINE:
        # Wine 8's powrprof.dll has no PowerReadACValueIndex: the editor says so, it does not fail.
        assert why_not == (
            'cannot read the power plan\'s "Allow wake timers": '
            "powrprof has no function PowerReadACValueIndex"
        )
    else:
        assert why_not is None or why_not.startswith("the power plan does not allow wake timers")
