"""Test doubles for the platform layer."""

from __future__ import annotations

import ctypes
import threading

from domi_desktop.platform.resume.windows import SubscribeParameters


class MemoryRegistry:
    """``RegistryLike`` over a dict: what ``winreg`` would hold under the Run key."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete(self, name: str) -> None:
        self.values.pop(name, None)


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
