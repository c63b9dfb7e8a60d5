"""Windows: a waitable timer set with ``fResume=TRUE``, held by the app (``CreateWaitableTimerExW``
+ ``SetWaitableTimer``): the handle is the alarm, so it ends with the process, crash or not.

Windows honours it only while the power plan's "Allow wake timers" (the sleep subgroup's RTC wake
setting) is on for the power source of the moment; ``capability`` reads it from the active plan
(``PowerReadACValueIndex``/``PowerReadDCValueIndex``) and says so when it is off. On Modern
Standby machines Windows may still wake late or not at all: the run is then late, and said so.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from domi_desktop.ffi import Signature, load_windows
from domi_desktop.platform.wake.base import utc_text

log = logging.getLogger("domi_desktop.platform.wake")

CREATE_WAITABLE_TIMER_MANUAL_RESET = 0x00000001
TIMER_ALL_ACCESS = 0x001F0003
ERROR_NOT_SUPPORTED = 50
FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
"""FILETIME counts 100 ns ticks from here; a positive due time is such an absolute UTC instant."""


class GUID(ctypes.Structure):
    _fields_ = (
        ("Data1", ctypes.c_uint32),
        ("Data2", ctypes.c_uint16),
        ("Data3", ctypes.c_uint16),
        ("Data4", ctypes.c_ubyte * 8),
    )

    @classmethod
    def parse(cls, text: str) -> GUID:
        """``238C9FA8-0AAD-41ED-83F4-97BE242C8F20`` as the structure Windows reads."""
        raw = bytes.fromhex(text.replace("-", ""))
        return cls(
            int.from_bytes(raw[0:4], "big"),
            int.from_bytes(raw[4:6], "big"),
            int.from_bytes(raw[6:8], "big"),
            (ctypes.c_ubyte * 8)(*raw[8:]),
        )


GUID_SLEEP_SUBGROUP = "238C9FA8-0AAD-41ED-83F4-97BE242C8F20"
GUID_ALLOW_WAKE_TIMERS = "BD3B718A-0680-4D9D-8AB2-E1D2B4AC806D"
"""The sleep subgroup's "Allow wake timers": 0 off, 1 on, 2 important wake timers only (ours are
not: Windows keeps those for its own maintenance)."""

_HANDLE = ctypes.c_void_p
_GUID_P = ctypes.POINTER(GUID)

KERNEL32: dict[str, Signature] = {
    "CreateWaitableTimerExW": (
        (ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32, ctypes.c_uint32),
        _HANDLE,
    ),
    "SetWaitableTimer": (
        (
            _HANDLE,
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_long,
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_int,
        ),
        ctypes.c_int,
    ),
    "CancelWaitableTimer": ((_HANDLE,), ctypes.c_int),
    "CloseHandle": ((_HANDLE,), ctypes.c_int),
    "LocalFree": ((ctypes.c_void_p,), ctypes.c_void_p),
}
POWRPROF: dict[str, Signature] = {
    "PowerGetActiveScheme": ((ctypes.c_void_p, ctypes.POINTER(_GUID_P)), ctypes.c_uint32),
    "PowerReadACValueIndex": (
        (ctypes.c_void_p, _GUID_P, _GUID_P, _GUID_P, ctypes.POINTER(ctypes.c_uint32)),
        ctypes.c_uint32,
    ),
    "PowerReadDCValueIndex": (
        (ctypes.c_void_p, _GUID_P, _GUID_P, _GUID_P, ctypes.POINTER(ctypes.c_uint32)),
        ctypes.c_uint32,
    ),
}


def load_kernel32() -> Any:
    return load_windows("kernel32", KERNEL32)


def load_powrprof() -> Any:
    return load_windows("powrprof", POWRPROF)


def due_time(at: datetime) -> int:
    """``at`` as ``SetWaitableTimer``'s absolute due time: 100 ns ticks since 1601 (UTC)."""
    span = at.astimezone(UTC) - FILETIME_EPOCH
    return (span.days * 86_400 + span.seconds) * 10_000_000 + span.microseconds * 10


class WaitableTimerWakeAlarm:
    via = "a Windows waitable timer"

    def __init__(
        self,
        kernel32: Callable[[], Any] = load_kernel32,
        powrprof: Callable[[], Any] = load_powrprof,
        last_error: Callable[[], int] | None = None,
    ) -> None:
        self._load_kernel32 = kernel32
        self._load_powrprof = powrprof
        self._last_error = last_error or _last_error
        self._kernel32: Any = None
        self._handle: int | None = None
        self._status = "not armed"

    @property
    def status(self) -> str:
        return self._status

    def capability(self) -> str | None:
        try:
            on_mains, on_battery = self.wake_timers_allowed()
        except OSError as error:
            return f'cannot read the power plan\'s "Allow wake timers": {error}'
        where = {(False, False): "on mains and on battery", (False, True): "on mains"}
        off = where.get((on_mains, on_battery))
        if off is None and not on_battery:
            log.info("the power plan does not allow wake timers on battery")
        if off is None:
            return None
        return (
            f"the power plan does not allow wake timers {off} (turn on Power Options > Sleep > "
            "Allow wake timers)"
        )

    def wake_timers_allowed(self) -> tuple[bool, bool]:
        """Whether the active power plan lets timers wake the machine (on mains, on battery)."""
        powrprof = self._load_powrprof()
        scheme = _GUID_P()
        code = powrprof.PowerGetActiveScheme(None, ctypes.byref(scheme))
        if code != 0:
            raise OSError(f"PowerGetActiveScheme failed (error {code})")
        try:
            subgroup = GUID.parse(GUID_SLEEP_SUBGROUP)
            setting = GUID.parse(GUID_ALLOW_WAKE_TIMERS)
            values = []
            for read in (powrprof.PowerReadACValueIndex, powrprof.PowerReadDCValueIndex):
                value = ctypes.c_uint32()
                code = read(
                    None, scheme, ctypes.byref(subgroup), ctypes.byref(setting), ctypes.byref(value)
                )
                if code != 0:
                    raise OSError(f"reading Allow wake timers failed (error {code})")
                values.append(value.value == 1)
        finally:
            self._kernel().LocalFree(scheme)
        return values[0], values[1]

    def arm(self, at: datetime) -> bool:
        try:
            kernel32 = self._kernel()
            if self._handle is None:
                handle = kernel32.CreateWaitableTimerExW(
                    None, None, CREATE_WAITABLE_TIMER_MANUAL_RESET, TIMER_ALL_ACCESS
                )
                if not handle:
                    raise OSError(f"CreateWaitableTimerExW failed (error {self._last_error()})")
                self._handle = int(handle)
            due = ctypes.c_int64(due_time(at))
            if not kernel32.SetWaitableTimer(self._handle, ctypes.byref(due), 0, None, None, 1):
                raise OSError(f"SetWaitableTimer failed (error {self._last_error()})")
            if self._last_error() == ERROR_NOT_SUPPORTED:
                raise OSError("this machine cannot be woken by a timer (ERROR_NOT_SUPPORTED)")
        except OSError as error:
            self._status = f"cannot arm {self.via}: {error}"
            return False
        self._status = f"the machine wakes at {utc_text(at)} ({self.via})"
        return True

    def cancel(self) -> None:
        self._status = "not armed"
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        kernel32 = self._kernel()
        kernel32.CancelWaitableTimer(handle)
        kernel32.CloseHandle(handle)

    def _kernel(self) -> Any:
        if self._kernel32 is None:
            self._kernel32 = self._load_kernel32()
        return self._kernel32


def _last_error() -> int:
    # ctypes has get_last_error on Windows only.
    code: int = ctypes.get_last_error()  # type: ignore[attr-defined,unused-ignore]
    return code
