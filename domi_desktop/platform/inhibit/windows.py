"""Windows: ``SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)`` through ctypes.

The state belongs to the calling thread (it ends with the thread or the process, crash or not),
so acquire and release happen on the Qt thread, and one state covers every held handle: it is
cleared when the last one is released.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from typing import Any

from domi_desktop.ffi import Signature, load_windows
from domi_desktop.platform.inhibit.base import NoInhibition
from domi_desktop.ports import InhibitorHandle

ES_CONTINUOUS = 0x80000000
ES_SYSTEM_REQUIRED = 0x00000001

_log = logging.getLogger("domi_desktop.platform.inhibit")


KERNEL32: dict[str, Signature] = {"SetThreadExecutionState": ((ctypes.c_uint32,), ctypes.c_uint32)}


def load_kernel32() -> Any:
    return load_windows("kernel32", KERNEL32)


class _Held:
    def __init__(self, owner: ExecutionStateInhibitor, why: str) -> None:
        self._owner: ExecutionStateInhibitor | None = owner
        self._why = why

    def release(self) -> None:
        if self._owner is not None:
            owner, self._owner = self._owner, None
            owner.drop(self._why)


class ExecutionStateInhibitor:
    def __init__(self, load: Callable[[], Any] = load_kernel32) -> None:
        self.status = "not used yet"
        self._load = load
        self._kernel32: Any = None
        self._held = 0

    def acquire(self, why: str) -> InhibitorHandle:
        try:
            if self._kernel32 is None:
                self._kernel32 = self._load()
        except (OSError, AttributeError) as error:
            self.status = f"cannot load kernel32: {error}"
            return NoInhibition()
        if self._held == 0 and not self._set(ES_CONTINUOUS | ES_SYSTEM_REQUIRED):
            self.status = "SetThreadExecutionState refused to keep the system awake"
            _log.warning("cannot keep the machine awake for %s: %s", why, self.status)
            return NoInhibition()
        self._held += 1
        self.status = f"the execution state keeps the machine awake ({why})"
        _log.info("sleep inhibited (%s); %d held", why, self._held)
        return _Held(self, why)

    def drop(self, why: str) -> None:
        """Called by a handle's release."""
        self._held -= 1
        if self._held == 0 and not self._set(ES_CONTINUOUS):
            _log.warning("SetThreadExecutionState(ES_CONTINUOUS) failed after %s", why)
        _log.info("sleep inhibitor of %s released; %d held", why, self._held)

    def _set(self, flags: int) -> bool:
        # The previous state on success, 0 on failure.
        return bool(self._kernel32.SetThreadExecutionState(flags))
