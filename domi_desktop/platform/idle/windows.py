"""The session's idle time on Windows (``GetLastInputInfo``) and whether an app is presenting or
full screen (``SHQueryUserNotificationState``), which counts as the user being there."""

from __future__ import annotations

import ctypes
from datetime import timedelta

from domi_desktop.ffi import Signature, load_windows


class LASTINPUTINFO(ctypes.Structure):
    _fields_ = [("cbSize", ctypes.c_uint32), ("dwTime", ctypes.c_uint32)]


USER32: dict[str, Signature] = {
    "GetLastInputInfo": ((ctypes.POINTER(LASTINPUTINFO),), ctypes.c_int),
}
KERNEL32: dict[str, Signature] = {"GetTickCount": ((), ctypes.c_uint32)}
SHELL32: dict[str, Signature] = {
    "SHQueryUserNotificationState": ((ctypes.POINTER(ctypes.c_int),), ctypes.c_long),
}
PRESENTING = frozenset({2, 3, 4})
"""``QUNS_BUSY`` (a full-screen app), ``QUNS_RUNNING_D3D_FULL_SCREEN``, ``QUNS_PRESENTATION_MODE``."""


def last_input_idle() -> timedelta:
    info = LASTINPUTINFO(ctypes.sizeof(LASTINPUTINFO), 0)
    if not load_windows("user32", USER32).GetLastInputInfo(ctypes.byref(info)):
        code: int = ctypes.get_last_error()  # type: ignore[attr-defined,unused-ignore]
        raise OSError(f"GetLastInputInfo failed (error {code})")
    now = load_windows("kernel32", KERNEL32).GetTickCount()
    # Both are 32-bit tick counts that wrap every 49.7 days: the difference wraps with them.
    return timedelta(milliseconds=(now - info.dwTime) & 0xFFFFFFFF)


def presenting() -> bool:
    state = ctypes.c_int(0)
    result = load_windows("shell32", SHELL32).SHQueryUserNotificationState(ctypes.byref(state))
    if result != 0:
        raise OSError(f"SHQueryUserNotificationState failed (HRESULT {result & 0xFFFFFFFF:#x})")
    return state.value in PRESENTING


SOURCES = (("GetLastInputInfo", last_input_idle),)
PRESENCE = (("SHQueryUserNotificationState", presenting),)
