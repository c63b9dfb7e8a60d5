"""A stand-in screen locker: `org.freedesktop.ScreenSaver` and `org.gnome.ScreenSaver` on the
session bus, as GNOME Shell, KDE, xfce4-screensaver and light-locker serve them.

    python tests/desktop/fake_screensaver.py [--address ADDRESS] [--log calls.jsonl]

Connects to --address, else $DBUS_SESSION_BUS_ADDRESS, owns both names, serves `GetActive() -> b`
at /org/freedesktop/ScreenSaver and /ScreenSaver (interface org.freedesktop.ScreenSaver) and at
/org/gnome/ScreenSaver (interface org.gnome.ScreenSaver), prints READY and exits when the bus goes
away.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the freedesktop name:
  SetActive(b active, s which) -> d   emits ActiveChanged(active) from "freedesktop", "gnome" or
                                      "both" lockers (a real one may send either or both);
                                      returns the time.monotonic() at which it was sent
"""

from __future__ import annotations

import time

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import BusService, Failure, Interface, Reply, control_interface, serve
from jeepney import Message

FREEDESKTOP = "org.freedesktop.ScreenSaver"
GNOME = "org.gnome.ScreenSaver"
# KDE serves both paths; GNOME Shell serves its own name at its own path.
PATHS = {
    FREEDESKTOP: ("/org/freedesktop/ScreenSaver", "/ScreenSaver"),
    GNOME: ("/org/gnome/ScreenSaver",),
}
LOCKER_XML = """
<method name="GetActive"><arg name="active" type="b" direction="out"/></method>
<signal name="ActiveChanged"><arg name="new_value" type="b"/></signal>
"""
CONTROL_XML = """
<method name="SetActive">
  <arg name="active" type="b" direction="in"/><arg name="which" type="s" direction="in"/>
  <arg name="sent_at" type="d" direction="out"/>
</method>
"""
WHICH = {"freedesktop": (FREEDESKTOP,), "gnome": (GNOME,), "both": (FREEDESKTOP, GNOME)}


class FakeScreenSaver:
    def __init__(self, service: BusService) -> None:
        self.service = service
        self.active = False
        for name, paths in PATHS.items():
            for path in paths:
                service.add_interface(
                    path,
                    Interface(
                        name,
                        {"GetActive": lambda _: Reply("b", (self.active,))},
                        introspection=LOCKER_XML,
                    ),
                )
        service.add_interface(
            "/org/domi/Test", control_interface({"SetActive": self.set_active}, CONTROL_XML)
        )

    def set_active(self, msg: Message) -> Reply | Failure:
        active, which = bool(msg.body[0]), str(msg.body[1])
        if which not in WHICH:
            return Failure("org.freedesktop.DBus.Error.InvalidArgs", f"which: {which!r}")
        self.active = active
        sent = time.monotonic()
        for name in WHICH[which]:
            self.service.emit(PATHS[name][0], name, "ActiveChanged", "b", (active,))
        return Reply("d", (sent,))


def main() -> None:
    serve(
        __doc__,
        [FREEDESKTOP, GNOME],
        lambda service, _: FakeScreenSaver(service),
        bus="DBUS_SESSION_BUS_ADDRESS",
    )


if __name__ == "__main__":
    main()
