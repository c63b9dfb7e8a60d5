"""Windows: ``WM_POWERBROADCAST`` to a hidden window of our own, with or without a GUI.

The window is made with user32 through ctypes, not as a ``QWindow``: that needs a
``QGuiApplication``, and under ``--headless``'s bare ``QCoreApplication`` it aborted the process
("Cannot create window: no screens available", exit 134). Qt's event dispatcher pumps every message
of its thread, so the window's procedure runs on the Qt thread under either application, with no
hand-over between threads. It is a hidden top-level window, not a message-only one, because only
top-level windows get the broadcast; ``RegisterSuspendResumeNotification`` on it brings the events
on Modern Standby (S0 low-power idle) machines too. Being a real window, it also takes a posted
``WM_POWERBROADCAST``, which is how the release smoke test fakes a wake.

Importable on every OS; tests inject a fake ``user32`` that calls the real ctypes window procedure.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import sys
from collections.abc import Callable
from typing import Protocol, cast

from domi_desktop.ffi import Signature, load_windows
from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.platform.timezone import windows_settings_changed
from domi_desktop.ports import PowerEvent

WM_POWERBROADCAST = 0x0218
WM_TIMECHANGE = 0x001E
WM_SETTINGCHANGE = 0x001A
PBT_APMSUSPEND = 0x4
PBT_APMRESUMESUSPEND = 0x7
PBT_APMRESUMEAUTOMATIC = 0x12
DEVICE_NOTIFY_WINDOW_HANDLE = 0x0

# Windows calls a window procedure with the stdcall convention (the C one on x64 and arm64).
if sys.platform == "win32":
    _FUNCTYPE = ctypes.WINFUNCTYPE
else:
    _FUNCTYPE = ctypes.CFUNCTYPE

# LRESULT CALLBACK WindowProc(HWND, UINT, WPARAM, LPARAM), in fixed-width types so the layout is
# Windows' on any OS: WPARAM and LRESULT/LPARAM are pointer-sized, unsigned and signed.
WNDPROC = _FUNCTYPE(
    ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_ssize_t
)


class WNDCLASSW(ctypes.Structure):
    """winuser.h's ``WNDCLASSW``."""

    lpfnWndProc: Callable[[int | None, int, int, int], int]
    lpszClassName: str

    _fields_ = (
        ("style", ctypes.c_uint32),
        ("lpfnWndProc", WNDPROC),
        ("cbClsExtra", ctypes.c_int32),
        ("cbWndExtra", ctypes.c_int32),
        ("hInstance", ctypes.c_void_p),
        ("hIcon", ctypes.c_void_p),
        ("hCursor", ctypes.c_void_p),
        ("hbrBackground", ctypes.c_void_p),
        ("lpszMenuName", ctypes.c_wchar_p),
        ("lpszClassName", ctypes.c_wchar_p),
    )


class User32(Protocol):
    """The user32.dll functions in use (and kernel32's ``GetModuleHandleW``), declared."""

    def GetModuleHandleW(self, module_name: str | None, /) -> int | None: ...

    def RegisterClassW(self, window_class: ctypes._Pointer[WNDCLASSW], /) -> int: ...

    def UnregisterClassW(self, class_name: str, instance: int | None, /) -> int: ...

    def CreateWindowExW(
        self,
        ex_style: int,
        class_name: str,
        window_name: str,
        style: int,
        x: int,
        y: int,
        width: int,
        height: int,
        parent: int | None,
        menu: int | None,
        instance: int | None,
        param: int | None,
        /,
    ) -> int | None: ...

    def DestroyWindow(self, hwnd: int, /) -> int: ...

    def DefWindowProcW(
        self, hwnd: int | None, message: int, wparam: int, lparam: int, /
    ) -> int: ...

    def RegisterSuspendResumeNotification(self, recipient: int, flags: int, /) -> int | None: ...

    def UnregisterSuspendResumeNotification(self, registration: int, /) -> int: ...


def decode_power_message(message: int, wparam: int) -> PowerEvent | None:
    """What a window message says about sleep, if anything.

    After a wake Windows always sends ``PBT_APMRESUMEAUTOMATIC``, then ``PBT_APMRESUMESUSPEND`` too
    when a user woke it: both count, a second report only re-plans again.
    """
    if message != WM_POWERBROADCAST:
        return None
    if wparam in (PBT_APMRESUMEAUTOMATIC, PBT_APMRESUMESUSPEND):
        return "resume"
    if wparam == PBT_APMSUSPEND:
        return "sleep"
    return None


_class_numbers = itertools.count(1)
_log = logging.getLogger(__name__)


class PowerWindowResumeSource:
    """Reports sleep and resume from ``WM_POWERBROADCAST`` to a hidden window, on the Qt thread.

    The window also hears Windows' ``WM_TIMECHANGE`` and ``WM_SETTINGCHANGE`` broadcasts and
    passes them to ``on_settings_change``: the OS zone (``local``) is read again after one.

    ``platform`` and ``user32`` exist so tests can run it off Windows.
    """

    def __init__(
        self,
        *,
        platform: str = sys.platform,
        user32: User32 | None = None,
        on_settings_change: Callable[[], None] = windows_settings_changed,
    ) -> None:
        self.status = "not started"
        self._platform = platform
        self._user32 = user32
        self._on_settings_change = on_settings_change
        self._callbacks: PowerCallbacks | None = None
        # One procedure and one class for the object's life: the class keeps a pointer to it.
        self._procedure = WNDPROC(self._window_procedure)
        self._class = WNDCLASSW(lpfnWndProc=self._procedure)
        self._class.lpszClassName = f"domi-desktop-power-{next(_class_numbers)}"
        self._hwnd = 0
        self._registration = 0

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        if self._platform != "win32":
            self.status = f"WM_POWERBROADCAST exists only on Windows, not on {self._platform}"
            return False
        try:
            user32 = self._user32 or _load_user32()
        except OSError as error:
            self.status = f"user32.dll cannot be loaded, so no WM_POWERBROADCAST: {error}"
            return False
        self._user32 = user32
        # The class belongs to this module (the executable): with a NULL instance a class is
        # registered for no module, and some Windows builds refuse to create its windows.
        instance = user32.GetModuleHandleW(None)
        self._class.hInstance = instance
        if not user32.RegisterClassW(ctypes.pointer(self._class)):
            self.status = "cannot register a window class for WM_POWERBROADCAST"
            return False
        hwnd = user32.CreateWindowExW(
            0,
            self._class.lpszClassName,
            "domi-desktop power",
            0,
            0,
            0,
            0,
            0,
            None,
            None,
            instance,
            None,
        )
        if not hwnd:
            user32.UnregisterClassW(self._class.lpszClassName, instance)
            self.status = "cannot create the hidden window for WM_POWERBROADCAST"
            return False
        self._hwnd = hwnd
        self._callbacks = PowerCallbacks("WM_POWERBROADCAST", on_resume, on_sleep)
        self._registration = (
            user32.RegisterSuspendResumeNotification(hwnd, DEVICE_NOTIFY_WINDOW_HANDLE) or 0
        )
        if self._registration:
            self.status = (
                "listening to WM_POWERBROADCAST (hidden window, suspend/resume registered)"
            )
        else:
            self.status = "listening to WM_POWERBROADCAST broadcasts only (no suspend registration)"
        return True

    def stop(self) -> None:
        self._callbacks = None
        user32 = self._user32
        if user32 is None:
            return
        if self._registration:
            user32.UnregisterSuspendResumeNotification(self._registration)
            self._registration = 0
        if self._hwnd:
            user32.DestroyWindow(self._hwnd)
            user32.UnregisterClassW(self._class.lpszClassName, self._class.hInstance)
            self._hwnd = 0

    def _window_procedure(self, hwnd: int | None, message: int, wparam: int, lparam: int) -> int:
        """Called by Windows, on the thread that made the window: Qt's, pumping its messages.

        An exception must not leave it: ctypes would print it and return 0, which for
        ``WM_NCCREATE`` silently fails the window's creation.
        """
        try:
            if message in (WM_TIMECHANGE, WM_SETTINGCHANGE):
                self._on_settings_change()
            event = decode_power_message(message, wparam)
            if event is not None and self._callbacks is not None:
                self._callbacks.deliver(event)
                return 1  # TRUE: the request is granted (the only answer Windows still reads)
        except Exception:
            _log.exception("the power window's procedure failed on message 0x%04x", message)
        assert self._user32 is not None
        return self._user32.DefWindowProcW(hwnd, message, wparam, lparam)


_HANDLE, _TEXT = ctypes.c_void_p, ctypes.c_wchar_p
USER32: dict[str, Signature] = {
    "RegisterClassW": ((ctypes.POINTER(WNDCLASSW),), ctypes.c_uint16),
    "UnregisterClassW": ((_TEXT, _HANDLE), ctypes.c_int32),
    "CreateWindowExW": (
        (ctypes.c_uint32, _TEXT, _TEXT, ctypes.c_uint32)
        + (ctypes.c_int32,) * 4
        + (_HANDLE, _HANDLE, _HANDLE, ctypes.c_void_p),
        _HANDLE,
    ),
    "DestroyWindow": ((_HANDLE,), ctypes.c_int32),
    "DefWindowProcW": (
        (_HANDLE, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_ssize_t),
        ctypes.c_ssize_t,
    ),
    "RegisterSuspendResumeNotification": ((_HANDLE, ctypes.c_uint32), _HANDLE),
    "UnregisterSuspendResumeNotification": ((_HANDLE,), ctypes.c_int32),
}
KERNEL32: dict[str, Signature] = {"GetModuleHandleW": ((_TEXT,), _HANDLE)}


class _Windowing:
    """user32's functions and kernel32's ``GetModuleHandleW``, as one ``User32``."""

    def __init__(self) -> None:
        self._user32 = load_windows("user32", USER32)
        self.GetModuleHandleW = load_windows("kernel32", KERNEL32).GetModuleHandleW

    def __getattr__(self, name: str) -> object:
        return getattr(self._user32, name)


def _load_user32() -> User32:
    # Functions found by __getattr__, which a Protocol cannot see.
    return cast(User32, _Windowing())
