"""Test doubles for the platform layer."""

from __future__ import annotations

import ctypes
import threading

from domi_desktop.platform.autostart.macos import ENABLED, NOT_REGISTERED
from domi_desktop.platform.resume.windows import SubscribeParameters


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


class FakePowrProf:
    """powrprof.dll's suspend/resume registration: ``send`` calls the registered C callback the way
    Windows does, from a thread of its own, through the function pointer it was handed."""

    HANDLE = 0x5EED

    def __init__(self, *, refuse_with: int = 0) -> None:
        self.refuse_with = refuse_with
        self.flags: list[int] = []
        self.unregistered: list[int] = []
        self._parameters: SubscribeParameters | None = None
        self.callback_threads: list[int] = []

    def PowerRegisterSuspendResumeNotification(
        self,
        flags: int,
        recipient: ctypes._Pointer[SubscribeParameters],
        registration: ctypes._Pointer[ctypes.c_void_p],
        /,
    ) -> int:
        self.flags.append(flags)
        if self.refuse_with:
            return self.refuse_with
        self._parameters = recipient.contents
        registration.contents.value = self.HANDLE
        return 0

    def PowerUnregisterSuspendResumeNotification(self, registration: int, /) -> int:
        self.unregistered.append(registration)
        self._parameters = None
        return 0

    @property
    def registered(self) -> bool:
        return self._parameters is not None

    def send(self, power_type: int) -> int:
        """Call the callback with ``power_type`` on a new thread; its return value."""
        assert self._parameters is not None, "nothing registered"
        callback = self._parameters.Callback
        answers: list[int] = []

        def call() -> None:
            self.callback_threads.append(threading.get_ident())
            answers.append(callback(None, power_type, None))

        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
        return answers[0]


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
