"""Windows: a hidden top-level window of our own whose messages go to a Python handler, on the Qt
thread (Qt's event dispatcher pumps every message of its thread). The unlock source
(``WM_WTSSESSION_CHANGE``) and the disk reader (``WM_DEVICECHANGE``) each open one; it is made
as the power window of ``platform/resume/windows.py`` is, for the reasons given there.

Importable on every OS; tests inject a fake ``user32`` that calls the real window procedure.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
from collections.abc import Callable

from domi_desktop.platform.resume.windows import WNDCLASSW, WNDPROC, User32

Handler = Callable[[int, int, int], int | None]
"""(message, wparam, lparam) -> the answer, or ``None`` to let ``DefWindowProcW`` answer."""

_class_numbers = itertools.count(1)
_log = logging.getLogger(__name__)


class HiddenWindow:
    def __init__(self, title: str, handler: Handler, user32: User32) -> None:
        self.title = title
        self.hwnd = 0
        self._handler = handler
        self._user32 = user32
        # One procedure and one class for the object's life: the class keeps a pointer to it.
        self._procedure = WNDPROC(self._window_procedure)
        self._class = WNDCLASSW(lpfnWndProc=self._procedure)
        self._class.lpszClassName = f"domi-desktop-{title}-{next(_class_numbers)}"

    def open(self) -> str | None:
        """``None`` once the window exists, else why it could not be made."""
        user32 = self._user32
        instance = user32.GetModuleHandleW(None)
        self._class.hInstance = instance
        if not user32.RegisterClassW(ctypes.pointer(self._class)):
            return f"cannot register a window class for the {self.title} window"
        hwnd = user32.CreateWindowExW(
            0, self._class.lpszClassName, f"domi-desktop {self.title}",
            0, 0, 0, 0, 0, None, None, instance, None,
        )  # fmt: skip
        if not hwnd:
            user32.UnregisterClassW(self._class.lpszClassName, instance)
            return f"cannot create the hidden {self.title} window"
        self.hwnd = hwnd
        return None

    def close(self) -> None:
        if self.hwnd:
            self._user32.DestroyWindow(self.hwnd)
            self._user32.UnregisterClassW(self._class.lpszClassName, self._class.hInstance)
            self.hwnd = 0

    def _window_procedure(self, hwnd: int | None, message: int, wparam: int, lparam: int) -> int:
        """No exception may leave it: ctypes would print it and answer 0, which for
        ``WM_NCCREATE`` silently fails the window's creation."""
        try:
            answer = self._handler(message, wparam, lparam)
            if answer is not None:
                return answer
        except Exception:
            _log.exception("the %s window's procedure failed on 0x%04x", self.title, message)
        return self._user32.DefWindowProcW(hwnd, message, wparam, lparam)
