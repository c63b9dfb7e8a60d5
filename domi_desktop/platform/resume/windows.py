"""Windows: ``WM_POWERBROADCAST`` window messages, read by a native event filter on the Qt app.

Importable on every OS, so the decoding and the filter are tested anywhere; only the ``user32``
calls are behind ``sys.platform`` guards.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QCoreApplication
from PySide6.QtGui import QWindow

from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.ports import PowerEvent

WM_POWERBROADCAST = 0x0218
PBT_APMSUSPEND = 0x4
PBT_APMRESUMESUSPEND = 0x7
PBT_APMRESUMEAUTOMATIC = 0x12
DEVICE_NOTIFY_WINDOW_HANDLE = 0x0
# What Qt's Windows platform plugin names the MSG it hands to native event filters.
WINDOWS_MSG_EVENT_TYPE = b"windows_generic_MSG"


class POINT(ctypes.Structure):
    _fields_ = (("x", ctypes.c_int32), ("y", ctypes.c_int32))


class MSG(ctypes.Structure):
    """winuser.h's ``MSG``, spelt in fixed-width types so the layout is Windows' on any OS."""

    hwnd: int | None
    message: int
    wParam: int
    lParam: int

    _fields_ = (
        ("hwnd", ctypes.c_void_p),
        ("message", ctypes.c_uint32),
        ("wParam", ctypes.c_size_t),  # WPARAM is pointer-sized (UINT_PTR)
        ("lParam", ctypes.c_ssize_t),  # LPARAM too (LONG_PTR)
        ("time", ctypes.c_uint32),
        ("pt", POINT),
    )


def read_msg(address: int) -> tuple[int, int, int]:
    """``(hwnd, message, wParam)`` of the ``MSG`` at ``address``."""
    msg = MSG.from_address(address)
    return msg.hwnd or 0, msg.message, msg.wParam


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


class PowerBroadcastFilter(QAbstractNativeEventFilter):
    """Passes the power events among all native messages on to ``deliver``."""

    def __init__(self, deliver: Callable[[PowerEvent], None]) -> None:
        super().__init__()
        self._deliver = deliver

    def nativeEventFilter(
        self, eventType: QByteArray | bytes | bytearray | memoryview, message: int
    ) -> object:
        kind = eventType.data() if isinstance(eventType, QByteArray) else bytes(eventType)
        if kind == WINDOWS_MSG_EVENT_TYPE:
            _hwnd, number, wparam = read_msg(int(message))
            event = decode_power_message(number, wparam)
            if event is not None:
                self._deliver(event)
        # Never consume: Qt and DefWindowProc still answer the message as usual (TRUE).
        return False, 0


class PowerBroadcastResumeSource:
    """Reports sleep and resume from ``WM_POWERBROADCAST``, on the GUI thread.

    Windows broadcasts the message to top-level windows, so a hidden one is created;
    ``RegisterSuspendResumeNotification`` on it is what brings the message on Modern Standby
    (S0 low-power idle) machines as well. ``platform`` exists so tests can wire it up off Windows.
    """

    def __init__(self, *, platform: str = sys.platform) -> None:
        self.status = "not started"
        self._platform = platform
        self._filter: PowerBroadcastFilter | None = None
        self._window: QWindow | None = None
        self._registration = 0

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        if self._platform != "win32":
            self.status = f"WM_POWERBROADCAST exists only on Windows, not on {self._platform}"
            return False
        app = QCoreApplication.instance()
        if app is None:
            self.status = "no Qt application to receive WM_POWERBROADCAST"
            return False
        callbacks = PowerCallbacks("WM_POWERBROADCAST", on_resume, on_sleep)
        self._filter = PowerBroadcastFilter(callbacks.deliver)
        app.installNativeEventFilter(self._filter)
        self._window = QWindow()
        self._window.create()
        self._registration = _register_suspend_resume_notification(int(self._window.winId()))
        if self._registration:
            self.status = "listening to WM_POWERBROADCAST"
        else:
            self.status = "listening to WM_POWERBROADCAST broadcasts only (no suspend registration)"
        return True

    def stop(self) -> None:
        if self._registration:
            _unregister_suspend_resume_notification(self._registration)
            self._registration = 0
        if self._filter is not None:
            app = QCoreApplication.instance()
            if app is not None:
                app.removeNativeEventFilter(self._filter)
            self._filter = None
        if self._window is not None:
            self._window.destroy()
            self._window = None


def _register_suspend_resume_notification(hwnd: int) -> int:
    """The registration handle, or 0 when there is none (off Windows, or the call failed)."""
    if sys.platform == "win32":
        register = ctypes.windll.user32.RegisterSuspendResumeNotification
        register.argtypes = (ctypes.c_void_p, ctypes.c_uint32)
        register.restype = ctypes.c_void_p
        handle: int | None = register(hwnd, DEVICE_NOTIFY_WINDOW_HANDLE)
        return handle or 0
    return 0


def _unregister_suspend_resume_notification(handle: int) -> None:
    if sys.platform == "win32":
        unregister = ctypes.windll.user32.UnregisterSuspendResumeNotification
        unregister.argtypes = (ctypes.c_void_p,)
        unregister.restype = ctypes.c_int
        unregister(handle)
