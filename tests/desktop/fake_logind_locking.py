"""The stand-in logind (fake_logind.py) whose session also has a `LockedHint`, as a desktop's
locker sets it with `SetLockedHint` (GNOME Shell, KDE): each change is announced with
`org.freedesktop.DBus.Properties.PropertiesChanged` on the session's object, as logind does.

    python tests/desktop/fake_logind_locking.py [--address ADDRESS] [--log calls.jsonl]

Everything of fake_logind.py, and on its control interface (`org.domi.Test` at /org/domi/Test):
  SetLockedHint(b locked) -> d   the session's LockedHint, announced; returns the
                                 time.monotonic() at which it was sent
  EmitLock() -> d                emits Session.Lock (what `loginctl lock-session` makes logind send)
"""

from __future__ import annotations

import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fake_logind import LOGIN1, SESSION, SESSION_PATH, FakeLogind
from fakebus import CONTROL_INTERFACE, CONTROL_PATH, PROPERTIES, BusService, Reply, serve
from jeepney import Message


class LockingLogind(FakeLogind):
    def __init__(self, service: BusService) -> None:
        super().__init__(service)
        self.locked = False
        session = service.objects[SESSION_PATH][SESSION]
        session.properties["LockedHint"] = ("b", lambda: self.locked)
        session.introspection += (
            '<property name="LockedHint" type="b" access="read"/><signal name="Lock"/>'
        )
        control = service.objects[CONTROL_PATH][CONTROL_INTERFACE]
        control.methods.update(SetLockedHint=self.set_locked_hint, EmitLock=self.emit_lock)

    def set_locked_hint(self, msg: Message) -> Reply:
        self.locked = bool(msg.body[0])
        sent = time.monotonic()
        body: tuple[Any, ...] = (SESSION, {"LockedHint": ("b", self.locked)}, [])
        self.service.emit(SESSION_PATH, PROPERTIES, "PropertiesChanged", "sa{sv}as", body)
        return Reply("d", (sent,))

    def emit_lock(self, _msg: Message) -> Reply:
        self.service.emit(SESSION_PATH, SESSION, "Lock", None, ())
        return Reply("d", (time.monotonic(),))


def main() -> None:
    serve(__doc__, [LOGIN1], lambda service, _: LockingLogind(service), enable_fds=True)


if __name__ == "__main__":
    main()
