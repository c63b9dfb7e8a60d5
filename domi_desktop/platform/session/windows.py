"""Windows: ``WM_WTSSESSION_CHANGE`` with ``WTS_SESSION_UNLOCK`` to a hidden window registered
with ``WTSRegisterSessionNotification`` for this session.

Importable on every OS; tests inject fakes of ``user32`` and ``wtsapi32``.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Protocol

from domi_desktop.ffi import Signature, load_windows
from domi_desktop.platform.resume.windows import User32, _load_user32
from domi_desktop.platform.winwindow import HiddenWindow

WM_WTSSESSION_CHANGE = 0x02B1
WTS_SESSION_LOCK = 0x7
WTS_SESSION_UNLOCK = 0x8
NOTIFY_FOR_THIS_SESSION = 0


class WtsApi32(Protocol):
    def WTSRegisterSessionNotification(self, hwnd: int, flags: int, /) -> int: ...

    def WTSUnRegisterSessionNotification(self, hwnd: int, /) -> int: ...


WTSAPI32: dict[str, Signature] = {
    "WTSRegisterSessionNotification": ((ctypes.c_void_p, ctypes.c_uint32), ctypes.c_int32),
    "WTSUnRegisterSessionNotification": ((ctypes.c_void_p,), ctypes.c_int32),
}


def is_unlock(message: int, wparam: int) -> bool:
    return message == WM_WTSSESSION_CHANGE and wparam == WTS_SESSION_UNLOCK


class SessionWindowUnlockSource:
    def __init__(
        self,
        *,
        platform: str = sys.platform,
        user32: User32 | None = None,
        wtsapi32: WtsApi32 | None = None,
    ) -> None:
        self.status = "not started"
        self._platform = platform
        self._user32 = user32
        self._wtsapi32 = wtsapi32
        self._window: HiddenWindow | None = None
        self._on_unlock: Callable[[], None] | None = None

    def start(self, on_unlock: Callable[[], None]) -> bool:
        self.stop()
        if self._platform != "win32":
            self.status = f"WTS session notifications exist only on Windows, not {self._platform}"
            return False
        try:
            user32 = self._user32 or _load_user32()
            wts: WtsApi32 = self._wtsapi32 or load_windows("wtsapi32", WTSAPI32)
        except OSError as error:
            self.status = f"user32 or wtsapi32 cannot be loaded, so no unlock: {error}"
            return False
        self._user32, self._wtsapi32 = user32, wts
        window = HiddenWindow("session", self._message, user32)
        problem = window.open()
        if problem is not None:
            self.status = problem
            return False
        if not wts.WTSRegisterSessionNotification(window.hwnd, NOTIFY_FOR_THIS_SESSION):
            window.close()
            self.status = "WTSRegisterSessionNotification refused the window"
            return False
        self._window = window
        self._on_unlock = on_unlock
        self.status = "listening to WTS_SESSION_UNLOCK (hidden window)"
        return True

    def stop(self) -> None:
        if self._window is not None and self._wtsapi32 is not None:
            self._wtsapi32.WTSUnRegisterSessionNotification(self._window.hwnd)
            self._window.close()
        self._window = None
        self._on_unlock = None

    def _message(self, message: int, wparam: int, _lparam: int) -> int | None:
        if is_unlock(message, wparam) and self._on_unlock is not None:
            self._on_unlock()
            return 0
        return None
