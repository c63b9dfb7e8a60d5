"""The session's idle time on macOS: the seconds since any input event of the login session
(``CGEventSourceSecondsSinceLastEventType``)."""

from __future__ import annotations

import ctypes
from datetime import timedelta

from domi_desktop.ffi import Signature, load_c

CORE_GRAPHICS = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
CG: dict[str, Signature] = {
    "CGEventSourceSecondsSinceLastEventType": ((ctypes.c_int32, ctypes.c_uint32), ctypes.c_double),
}
COMBINED_SESSION_STATE = 0
"""``kCGEventSourceStateCombinedSessionState``: every source of the login session."""
ANY_INPUT_EVENT = 0xFFFFFFFF
"""``kCGAnyInputEventType``."""


def event_idle() -> timedelta:
    seconds = load_c(CORE_GRAPHICS, CG).CGEventSourceSecondsSinceLastEventType(
        COMBINED_SESSION_STATE, ANY_INPUT_EVENT
    )
    return timedelta(seconds=max(0.0, float(seconds)))


SOURCES = (("the window server's input events", event_idle),)
