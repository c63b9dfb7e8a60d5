"""macOS: an IOKit power assertion (``PreventUserIdleSystemSleep``) per held inhibitor, through
ctypes; macOS drops a process's assertions when it exits, crash or not.

The frameworks are loaded at the first ``acquire``, through ``load`` (a test hands in fakes), so
this module imports anywhere.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from typing import Any

from domi_desktop.ffi import Signature, load_c
from domi_desktop.platform.inhibit.base import NoInhibition
from domi_desktop.ports import InhibitorHandle

IOKIT = "/System/Library/Frameworks/IOKit.framework/IOKit"
CORE_FOUNDATION = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
ASSERTION_TYPE = b"PreventUserIdleSystemSleep"
ASSERTION_LEVEL_ON = 255  # kIOPMAssertionLevelOn
CF_STRING_ENCODING_UTF8 = 0x08000100
IO_RETURN_SUCCESS = 0

_log = logging.getLogger("domi_desktop.platform.inhibit")


FRAMEWORKS: dict[str, dict[str, Signature]] = {
    IOKIT: {
        "IOPMAssertionCreateWithName": (
            (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)),
            ctypes.c_int32,
        ),
        "IOPMAssertionRelease": ((ctypes.c_uint32,), ctypes.c_int32),
    },
    CORE_FOUNDATION: {
        "CFStringCreateWithCString": (
            (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32),
            ctypes.c_void_p,
        ),
        "CFRelease": ((ctypes.c_void_p,), None),
    },
}


def load_framework(path: str) -> Any:
    return load_c(path, FRAMEWORKS[path])


class _Frameworks:
    def __init__(self, load: Callable[[str], Any]) -> None:
        self.iokit = load(IOKIT)
        self.cf = load(CORE_FOUNDATION)

    def cfstring(self, text: bytes) -> Any:
        return self.cf.CFStringCreateWithCString(None, text, CF_STRING_ENCODING_UTF8)


class AssertionHandle:
    def __init__(self, frameworks: _Frameworks, assertion_id: int, why: str) -> None:
        self._frameworks: _Frameworks | None = frameworks
        self._id = assertion_id
        self._why = why

    def release(self) -> None:
        if self._frameworks is None:
            return
        frameworks, self._frameworks = self._frameworks, None
        result = frameworks.iokit.IOPMAssertionRelease(self._id)
        if result != IO_RETURN_SUCCESS:
            _log.warning("IOPMAssertionRelease(%d) for %s: 0x%x", self._id, self._why, result)
        _log.info("sleep allowed again (%s)", self._why)


class AssertionSleepInhibitor:
    def __init__(self, load: Callable[[str], Any] = load_framework) -> None:
        self.status = "not used yet"
        self._load = load
        self._frameworks: _Frameworks | None = None

    def acquire(self, why: str) -> InhibitorHandle:
        try:
            if self._frameworks is None:
                self._frameworks = _Frameworks(self._load)
        except (OSError, AttributeError) as error:
            self.status = f"cannot load IOKit: {error}"
            return NoInhibition()
        frameworks = self._frameworks
        kind = frameworks.cfstring(ASSERTION_TYPE)
        name = frameworks.cfstring(f"domi-desktop: {why}".encode())
        assertion_id = ctypes.c_uint32(0)
        try:
            result = frameworks.iokit.IOPMAssertionCreateWithName(
                kind, ASSERTION_LEVEL_ON, name, ctypes.pointer(assertion_id)
            )
        finally:
            for ref in (kind, name):
                if ref:
                    frameworks.cf.CFRelease(ref)
        if result != IO_RETURN_SUCCESS:
            self.status = f"IOPMAssertionCreateWithName failed: 0x{result & 0xFFFFFFFF:x}"
            _log.warning("cannot keep the machine awake for %s: %s", why, self.status)
            return NoInhibition()
        self.status = f"a power assertion keeps the machine awake ({why})"
        _log.info("sleep inhibited by IOPM assertion %d (%s)", assertion_id.value, why)
        return AssertionHandle(frameworks, assertion_id.value, why)
