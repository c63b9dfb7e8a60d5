"""A stand-in GNOME session: Mutter's idle monitor and the session manager's inhibitors, on the
session bus.

    python tests/desktop/fake_idle.py [--address ADDRESS] [--log calls.jsonl]

Serves /org/gnome/Mutter/IdleMonitor/Core (interface org.gnome.Mutter.IdleMonitor:
`GetIdletime() -> t`, milliseconds) with the X server's own count since the last input
(`XScreenSaverQueryInfo` on $DISPLAY), as Mutter does: real typing (xdotool) restarts it. And
/org/gnome/SessionManager (interface org.gnome.SessionManager: `IsInhibited(u flags) -> b`), true
for the idle flag (8) while a test holds an inhibitor.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same names:
  Inhibit(b) -> d   hold (true) or let go (false) an idle inhibitor, as a video player does;
                    returns the time.monotonic() of the change
"""

from __future__ import annotations

import ctypes
import time

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import CONTROL_INTERFACE, CONTROL_PATH, BusService, Failure, Reply, serve
from fakeprops import PropertySet
from jeepney import Message

MUTTER = "org.gnome.Mutter.IdleMonitor"
MUTTER_PATH = "/org/gnome/Mutter/IdleMonitor/Core"
SESSION = "org.gnome.SessionManager"
SESSION_PATH = "/org/gnome/SessionManager"
INHIBIT_IDLE = 8


class Info(ctypes.Structure):
    _fields_ = [
        ("window", ctypes.c_ulong),
        ("state", ctypes.c_int),
        ("kind", ctypes.c_int),
        ("til_or_since", ctypes.c_ulong),
        ("idle", ctypes.c_ulong),
        ("eventMask", ctypes.c_ulong),
    ]


class XIdle:
    def __init__(self) -> None:
        self.xlib = ctypes.CDLL("libX11.so.6")
        self.xss = ctypes.CDLL("libXss.so.1")
        self.xlib.XOpenDisplay.argtypes = (ctypes.c_char_p,)
        self.xlib.XOpenDisplay.restype = ctypes.c_void_p
        self.xlib.XDefaultRootWindow.argtypes = (ctypes.c_void_p,)
        self.xlib.XDefaultRootWindow.restype = ctypes.c_ulong
        self.xss.XScreenSaverQueryInfo.argtypes = (
            ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(Info),
        )  # fmt: skip
        self.xss.XScreenSaverQueryInfo.restype = ctypes.c_int
        self.display = self.xlib.XOpenDisplay(None)
        if not self.display:
            raise SystemExit("fake_idle: no X display")
        self.root = self.xlib.XDefaultRootWindow(self.display)

    def milliseconds(self) -> int:
        info = Info()
        if not self.xss.XScreenSaverQueryInfo(self.display, self.root, ctypes.byref(info)):
            raise OSError("no screensaver extension")
        return int(info.idle)


class FakeGnomeIdle:
    def __init__(self, service: BusService) -> None:
        self.x = XIdle()
        self.inhibited = False
        PropertySet(service, MUTTER_PATH, MUTTER, {}, {}).serve(
            {"GetIdletime": lambda _: Reply("t", (self.x.milliseconds(),))},
            '<method name="GetIdletime"><arg type="t" direction="out"/></method>',
        )
        PropertySet(service, SESSION_PATH, SESSION, {}, {}).serve(
            {"IsInhibited": self.is_inhibited},
            '<method name="IsInhibited"><arg type="u" direction="in"/>'
            '<arg type="b" direction="out"/></method>',
        )
        PropertySet(service, CONTROL_PATH, CONTROL_INTERFACE, {}, {}).serve(
            {"Inhibit": self.inhibit},
            '<method name="Inhibit"><arg type="b" direction="in"/>'
            '<arg type="d" direction="out"/></method>',
            recorded=False,
        )

    def is_inhibited(self, msg: Message) -> Reply:
        (flags,) = msg.body
        return Reply("b", (self.inhibited and bool(flags & INHIBIT_IDLE),))

    def inhibit(self, msg: Message) -> Reply | Failure:
        (held,) = msg.body
        self.inhibited = bool(held)
        return Reply("d", (time.monotonic(),))


def main() -> None:
    serve(
        __doc__, [MUTTER, SESSION], lambda service, _: FakeGnomeIdle(service),
        bus="DBUS_SESSION_BUS_ADDRESS",
    )  # fmt: skip


if __name__ == "__main__":
    main()
