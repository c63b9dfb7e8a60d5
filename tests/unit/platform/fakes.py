"""Test doubles for the platform layer."""

from __future__ import annotations

import ctypes

from domi_desktop.platform.autostart.macos import ENABLED, NOT_REGISTERED
from domi_desktop.platform.resume.windows import WNDCLASSW


class MemoryRegistry:
    """``RegistryLike`` over a dict: what ``winreg`` would hold under ``HKEY_CURRENT_USER``."""

    def __init__(self) -> None:
        self.keys: dict[str, dict[str, str | bytes]] = {}

    def get(self, key: str, name: str) -> str | bytes | None:
        return self.keys.get(key, {}).get(name)

    def set(self, key: str, name: str, value: str | bytes) -> None:
        self.keys.setdefault(key, {})[name] = value

    def delete(self, key: str, name: str) -> None:
        self.keys.get(key, {}).pop(name, None)


class FakeUser32:
    """user32.dll's window calls: ``send`` calls the registered window procedure through the
    function pointer in the class, as Windows' SendMessage or DispatchMessage would."""

    HWND = 0x10A2C
    REGISTRATION = 0x5EED
    MODULE = 0x7FF6_0000_0000  # the executable's HINSTANCE: above 4 GB, as on 64-bit Windows

    def __init__(self, *, create_fails: bool = False, register_fails: bool = False) -> None:
        self.create_fails = create_fails
        self.register_fails = register_fails
        self.classes: dict[str, WNDCLASSW] = {}
        self.windows: dict[int, str] = {}
        self.registrations: list[tuple[int, int]] = []
        self.unregistered: list[int] = []
        self.default_calls: list[int] = []
        self.instances: list[tuple[str, int | None]] = []

    def GetModuleHandleW(self, module_name: str | None, /) -> int | None:
        return self.MODULE if module_name is None else None

    def RegisterClassW(self, window_class: ctypes._Pointer[WNDCLASSW], /) -> int:
        name = window_class.contents.lpszClassName
        self.instances.append(("class", window_class.contents.hInstance))
        if name in self.classes:
            return 0  # ERROR_CLASS_ALREADY_EXISTS
        self.classes[name] = window_class.contents
        return 0xC0DE

    def UnregisterClassW(self, class_name: str, instance: int | None, /) -> int:
        return int(self.classes.pop(class_name, None) is not None)

    def CreateWindowExW(self, ex_style: int, class_name: str, *rest: object) -> int | None:
        instance = rest[8]
        assert instance is None or isinstance(instance, int)
        self.instances.append(("window", instance))
        if self.create_fails or class_name not in self.classes:
            return None
        self.windows[self.HWND] = class_name
        return self.HWND

    def DestroyWindow(self, hwnd: int, /) -> int:
        return int(self.windows.pop(hwnd, None) is not None)

    def DefWindowProcW(self, hwnd: int | None, message: int, wparam: int, lparam: int, /) -> int:
        self.default_calls.append(message)
        return 0

    def RegisterSuspendResumeNotification(self, recipient: int, flags: int, /) -> int | None:
        self.registrations.append((recipient, flags))
        return None if self.register_fails else self.REGISTRATION

    def UnregisterSuspendResumeNotification(self, registration: int, /) -> int:
        self.unregistered.append(registration)
        return 1

    def send(self, message: int, wparam: int, lparam: int = 0) -> int:
        """What the window procedure answers ``message``."""
        procedure = self.classes[self.windows[self.HWND]].lpfnWndProc
        return int(procedure(self.HWND, message, wparam, lparam))


class FakeNSError:
    """An ``NSError`` as pyobjc shows it."""

    def __init__(self, description: str) -> None:
        self.description = description

    def localizedDescription(self) -> str:
        return self.description


class FakeAppService:
    """``SMAppService.mainAppService()`` as pyobjc shows it: ``status()``, and register/unregister
    returning ``(ok, NSError or None)``. ``state`` is what System Settings would have made of it."""

    def __init__(
        self,
        *,
        after_register: int = ENABLED,
        register_error: FakeNSError | None = None,
        unregister_error: FakeNSError | None = None,
    ) -> None:
        self.state = NOT_REGISTERED
        self.after_register = after_register
        self.register_error = register_error
        self.unregister_error = unregister_error
        self.calls: list[str] = []

    def status(self) -> int:
        return self.state

    def registerAndReturnError_(self, error: None, /) -> tuple[bool, FakeNSError | None]:
        self.calls.append("register")
        if self.register_error is not None:
            return False, self.register_error
        self.state = self.after_register
        return True, None

    def unregisterAndReturnError_(self, error: None, /) -> tuple[bool, FakeNSError | None]:
        self.calls.append("unregister")
        if self.unregister_error is not None:
            return False, self.unregister_error
        self.state = NOT_REGISTERED
        return True, None
