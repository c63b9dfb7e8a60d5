"""The session's idle time on Linux: GNOME's Mutter, the freedesktop ScreenSaver (KDE and
others), the X11 screensaver extension, logind's ``IdleHint``; and the idle inhibitors another app
holds (a video, a presentation), which count as the user being there."""

from __future__ import annotations

import ctypes
import os
import time
from datetime import timedelta

from domi_desktop.ffi import Signature, load_c
from domi_desktop.platform.dbus import (
    LOGIND_MANAGER,
    LOGIND_PATH,
    LOGIND_SERVICE,
    BusCaller,
    BusUnreachable,
    session_bus_address,
)

MUTTER = (
    "org.gnome.Mutter.IdleMonitor",
    "/org/gnome/Mutter/IdleMonitor/Core",
    "org.gnome.Mutter.IdleMonitor",
)
SCREENSAVER = (
    "org.freedesktop.ScreenSaver",
    "/org/freedesktop/ScreenSaver",
    "org.freedesktop.ScreenSaver",
)
GNOME_SESSION = (
    "org.gnome.SessionManager",
    "/org/gnome/SessionManager",
    "org.gnome.SessionManager",
)
GSM_INHIBIT_IDLE = 8
"""``GsmInhibitorFlag``: the session is kept from being marked idle."""
LOGIND_SESSION = "org.freedesktop.login1.Session"


def _session_bus() -> str:
    address = session_bus_address()
    if address is None:
        raise BusUnreachable("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    return address


def mutter_idle() -> timedelta:
    with BusCaller(_session_bus()) as bus:
        (milliseconds,) = bus.call(*MUTTER, "GetIdletime")
    return timedelta(milliseconds=int(milliseconds))


def screensaver_idle() -> timedelta:
    # KDE's answer (ksmserver's, from KIdleTime) is in milliseconds, though the name was the old
    # GNOME screensaver's, whose answer was in seconds; GNOME answers through Mutter above.
    with BusCaller(_session_bus()) as bus:
        (milliseconds,) = bus.call(*SCREENSAVER, "GetSessionIdleTime")
    return timedelta(milliseconds=int(milliseconds))


class XScreenSaverInfo(ctypes.Structure):
    _fields_ = [
        ("window", ctypes.c_ulong),
        ("state", ctypes.c_int),
        ("kind", ctypes.c_int),
        ("til_or_since", ctypes.c_ulong),
        ("idle", ctypes.c_ulong),
        ("eventMask", ctypes.c_ulong),
    ]


XLIB: dict[str, Signature] = {
    "XOpenDisplay": ((ctypes.c_char_p,), ctypes.c_void_p),
    "XDefaultRootWindow": ((ctypes.c_void_p,), ctypes.c_ulong),
    "XCloseDisplay": ((ctypes.c_void_p,), ctypes.c_int),
    "XFree": ((ctypes.c_void_p,), ctypes.c_int),
}
XSS: dict[str, Signature] = {
    "XScreenSaverAllocInfo": ((), ctypes.POINTER(XScreenSaverInfo)),
    "XScreenSaverQueryInfo": (
        (ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(XScreenSaverInfo)),
        ctypes.c_int,
    ),
}


def x11_idle() -> timedelta:
    """The X server's own count since the last input (``XScreenSaverQueryInfo``)."""
    if not os.environ.get("DISPLAY"):
        raise OSError("no X display (DISPLAY is not set)")
    xlib = load_c("libX11.so.6", XLIB)
    xss = load_c("libXss.so.1", XSS)
    display = xlib.XOpenDisplay(None)
    if not display:
        raise OSError(f"cannot open the X display {os.environ['DISPLAY']}")
    try:
        info = xss.XScreenSaverAllocInfo()
        if not info:
            raise OSError("XScreenSaverAllocInfo failed")
        try:
            if not xss.XScreenSaverQueryInfo(display, xlib.XDefaultRootWindow(display), info):
                raise OSError("the X server has no screensaver extension")
            return timedelta(milliseconds=info.contents.idle)
        finally:
            xlib.XFree(info)
    finally:
        xlib.XCloseDisplay(display)


def logind_idle() -> timedelta:
    """logind's ``IdleHint``, which the desktop sets after its own idle delay: coarse, so last."""
    with BusCaller() as bus:
        path = "/org/freedesktop/login1/session/auto"
        if not bus.get(LOGIND_SERVICE, path, LOGIND_SESSION, "IdleHint"):
            return timedelta(0)
        since = bus.get(LOGIND_SERVICE, path, LOGIND_SESSION, "IdleSinceHintMonotonic")
    now = time.monotonic_ns() // 1000  # CLOCK_MONOTONIC on Linux, logind's clock
    return timedelta(microseconds=max(0, now - int(since)))


def gnome_inhibited() -> bool:
    with BusCaller(_session_bus()) as bus:
        (inhibited,) = bus.call(*GNOME_SESSION, "IsInhibited", "u", GSM_INHIBIT_IDLE)
    return bool(inhibited)


def logind_inhibited() -> bool:
    with BusCaller() as bus:
        blocked = bus.get(LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "BlockInhibited")
    return "idle" in str(blocked).split(":")


SOURCES = (
    ("GNOME (Mutter's idle monitor)", mutter_idle),
    ("the session's screensaver", screensaver_idle),
    ("the X server", x11_idle),
    ("logind's idle hint", logind_idle),
)
PRESENCE = (
    ("GNOME's idle inhibitors", gnome_inhibited),
    ("logind's idle inhibitors", logind_inhibited),
)
