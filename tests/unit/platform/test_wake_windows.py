"""The Windows wake alarm at its boundary: the calls into kernel32 and powrprof it makes, against
recording fakes (the real DLLs are the Windows stage's, under Wine)."""

from __future__ import annotations

import ctypes
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domi_desktop.platform.wake.windows import (
    ERROR_NOT_SUPPORTED,
    GUID,
    GUID_ALLOW_WAKE_TIMERS,
    GUID_SLEEP_SUBGROUP,
    WaitableTimerWakeAlarm,
    due_time,
)

HANDLE = 0x1234


def guid_text(guid: GUID) -> str:
    tail = bytes(guid.Data4).hex().upper()
    return f"{guid.Data1:08X}-{guid.Data2:04X}-{guid.Data3:04X}-{tail[:4]}-{tail[4:]}"


class FakeKernel32:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.error = 0
        self.set_result = 1

    def CreateWaitableTimerExW(self, attributes: Any, name: Any, flags: int, access: int) -> int:
        self.calls.append(("create", attributes, name, flags, access))
        return HANDLE

    def SetWaitableTimer(
        self, handle: int, due: Any, period: int, routine: Any, argument: Any, resume: int
    ) -> int:
        self.calls.append(("set", handle, due._obj.value, period, routine, argument, resume))
        return self.set_result

    def CancelWaitableTimer(self, handle: int) -> int:
        self.calls.append(("cancel", handle))
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.calls.append(("close", handle))
        return 1

    def LocalFree(self, pointer: Any) -> None:
        self.calls.append(("free",))


class FakePowrprof:
    def __init__(self, ac: int, dc: int, failing: int = 0) -> None:
        self.ac, self.dc, self.failing = ac, dc, failing
        self.scheme = GUID.parse("381B4222-F694-41F0-9685-FF5BB260DF2E")  # Balanced
        self.read: list[tuple[str, str, str]] = []

    def PowerGetActiveScheme(self, root: Any, scheme: Any) -> int:
        if self.failing:
            return self.failing
        scheme._obj.contents = self.scheme
        return 0

    def _read(self, which: str, value: int, *args: Any) -> int:
        _root, scheme, subgroup, setting, out = args
        self.read.append(
            (which, guid_text(subgroup._obj), guid_text(setting._obj)),
        )
        assert guid_text(scheme.contents) == "381B4222-F694-41F0-9685-FF5BB260DF2E"
        out._obj.value = value
        return 0

    def PowerReadACValueIndex(self, *args: Any) -> int:
        return self._read("ac", self.ac, *args)

    def PowerReadDCValueIndex(self, *args: Any) -> int:
        return self._read("dc", self.dc, *args)


def make(
    ac: int = 1, dc: int = 1, failing: int = 0
) -> tuple[WaitableTimerWakeAlarm, FakeKernel32, FakePowrprof]:
    kernel32, powrprof = FakeKernel32(), FakePowrprof(ac, dc, failing)
    alarm = WaitableTimerWakeAlarm(
        lambda: kernel32, lambda: powrprof, last_error=lambda: kernel32.error
    )
    return alarm, kernel32, powrprof


def test_the_due_time_is_filetime_ticks_since_1601() -> None:
    # 2024-01-01 00:00 UTC: 1704067200 s after 1970, which is 11644473600 s after 1601.
    assert due_time(datetime(2024, 1, 1, tzinfo=UTC)) == 133_485_408_000_000_000
    assert due_time(datetime(1601, 1, 1, 0, 0, 1, 5, tzinfo=UTC)) == 10_000_050


def test_it_sets_a_waitable_timer_that_resumes_the_machine_and_moves_it() -> None:
    alarm, kernel32, _ = make()
    at = datetime(2026, 12, 2, 2, 59, 30, tzinfo=UTC)
    assert alarm.arm(at)
    assert alarm.arm(at + timedelta(days=1))
    create, first, second = kernel32.calls
    assert create == ("create", None, None, 1, 0x1F0003)  # manual reset, all access
    assert first == ("set", HANDLE, due_time(at), 0, None, None, 1)  # fResume=TRUE
    assert second[2] == due_time(at + timedelta(days=1))
    assert alarm.status == "the machine wakes at 2026-12-03 02:59:30 UTC (a Windows waitable timer)"
    alarm.cancel()
    assert kernel32.calls[-2:] == [("cancel", HANDLE), ("close", HANDLE)]
    alarm.cancel()  # nothing armed: nothing called
    assert len(kernel32.calls) == 5


def test_a_machine_that_cannot_resume_by_timer_is_said() -> None:
    alarm, kernel32, _ = make()
    kernel32.error = ERROR_NOT_SUPPORTED  # SetWaitableTimer succeeds, yet says so
    assert not alarm.arm(datetime(2026, 12, 2, tzinfo=UTC))
    assert "ERROR_NOT_SUPPORTED" in alarm.status
    kernel32.error, kernel32.set_result = 5, 0
    assert not alarm.arm(datetime(2026, 12, 2, tzinfo=UTC))
    assert alarm.status == "cannot arm a Windows waitable timer: SetWaitableTimer failed (error 5)"


def test_it_reads_allow_wake_timers_from_the_active_plan() -> None:
    alarm, kernel32, powrprof = make(ac=1, dc=1)
    assert alarm.capability() is None
    assert powrprof.read == [
        ("ac", GUID_SLEEP_SUBGROUP, GUID_ALLOW_WAKE_TIMERS),
        ("dc", GUID_SLEEP_SUBGROUP, GUID_ALLOW_WAKE_TIMERS),
    ]
    assert kernel32.calls == [("free",)]  # the scheme's GUID is the caller's to free


@pytest.mark.parametrize(
    ("ac", "dc", "said"),
    [
        (0, 0, "on mains and on battery"),
        (0, 1, "on mains"),
        (2, 2, "on mains and on battery"),  # important wake timers only: ours are not
    ],
)
def test_wake_timers_turned_off_are_said_with_the_way_to_allow_them(
    ac: int, dc: int, said: str
) -> None:
    alarm, _, _ = make(ac=ac, dc=dc)
    assert alarm.capability() == (
        f"the power plan does not allow wake timers {said} (turn on Power Options > Sleep > "
        "Allow wake timers)"
    )


def test_off_on_battery_only_still_wakes_on_mains() -> None:
    alarm, _, _ = make(ac=1, dc=0)
    assert alarm.capability() is None


def test_a_power_plan_that_cannot_be_read_is_said() -> None:
    alarm, _, _ = make(failing=2)
    assert alarm.capability() == (
        'cannot read the power plan\'s "Allow wake timers": PowerGetActiveScheme failed (error 2)'
    )


def test_the_guid_is_laid_out_as_windows_reads_it() -> None:
    guid = GUID.parse(GUID_SLEEP_SUBGROUP)
    assert guid_text(guid) == GUID_SLEEP_SUBGROUP
    assert ctypes.sizeof(guid) == 16
    assert bytes(guid)[:4] == bytes.fromhex("A89F8C23")  # Data1 little-endian
