"""A fake logind: `org.freedesktop.login1` on a private bus standing in for the system bus.

    python tests/desktop/fake_logind.py [--address ADDRESS] [--log calls.jsonl]

Connects to --address, else $DBUS_SYSTEM_BUS_ADDRESS (libdbus, hence QtDBus, honours that variable
for QDBusConnection.systemBus(), so a private dbus-daemon can play the system bus), owns
`org.freedesktop.login1`, serves /org/freedesktop/login1 (interface
`org.freedesktop.login1.Manager`: `Inhibit(ssss) -> h` and the `PreparingForSleep` property),
records every call as one JSON line in the log, prints READY once it owns the name and exits when
the bus goes away (or on SIGTERM).

`Inhibit` hands out the write end of a pipe, like logind's inhibitor fd: the lock is held until
every copy of it is closed by the caller.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same name:
  EmitPrepareForSleep(b going_to_sleep) -> d  emits Manager.PrepareForSleep; returns the
                                              time.monotonic() at which it was sent
  CountInhibitors() -> u                      how many inhibitor fds are still held open
  SetIdleHint(b idle, t since_usec) -> b      the session's IdleHint and IdleSinceHint
  EmitUnlock() -> d                           emits Session.Unlock on the session's object

Also `Suspend(b)` (recorded, answered, nothing sleeps), `CanSuspend() -> "yes"` and
`GetSessionByPID(u) -> o`: one session for every process, whose `org.freedesktop.login1.Session`
properties `IdleHint` and `IdleSinceHint` the control interface sets (not idle until then).
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import CONTROL_PATH, BusService, Interface, Reply, control_interface, serve
from jeepney import Message

LOGIN1 = "org.freedesktop.login1"
LOGIN1_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"

MANAGER_XML = """
<method name="Inhibit">
  <arg name="what" type="s" direction="in"/><arg name="who" type="s" direction="in"/>
  <arg name="why" type="s" direction="in"/><arg name="mode" type="s" direction="in"/>
  <arg name="pipe_fd" type="h" direction="out"/>
</method>
<method name="Suspend"><arg name="interactive" type="b" direction="in"/></method>
<method name="CanSuspend"><arg name="result" type="s" direction="out"/></method>
<method name="GetSessionByPID">
  <arg name="pid" type="u" direction="in"/><arg name="session" type="o" direction="out"/>
</method>
<property name="PreparingForSleep" type="b" access="read"/>
<signal name="PrepareForSleep"><arg name="start" type="b"/></signal>
"""

SESSION = "org.freedesktop.login1.Session"
SESSION_PATH = "/org/freedesktop/login1/session/_31"
SESSION_XML = """
<property name="IdleHint" type="b" access="read"/>
<property name="IdleSinceHint" type="t" access="read"/>
<signal name="Unlock"/>
"""

CONTROL_XML = """
<method name="EmitPrepareForSleep">
  <arg name="going_to_sleep" type="b" direction="in"/><arg name="sent_at" type="d" direction="out"/>
</method>
<method name="CountInhibitors"><arg name="count" type="u" direction="out"/></method>
<method name="EmitUnlock"><arg name="sent_at" type="d" direction="out"/></method>
<method name="SetIdleHint">
  <arg name="idle" type="b" direction="in"/><arg name="since_usec" type="t" direction="in"/>
  <arg name="idle_now" type="b" direction="out"/>
</method>
"""


class FakeLogind:
    def __init__(self, service: BusService) -> None:
        self.service = service
        self.preparing_for_sleep = False
        self.inhibitors: list[int] = []  # read ends of the pipes handed out by Inhibit
        self.idle = (False, 0)  # the session's IdleHint and IdleSinceHint (µs since the epoch)
        service.add_interface(
            SESSION_PATH,
            Interface(
                SESSION,
                properties={
                    "IdleHint": ("b", lambda: self.idle[0]),
                    "IdleSinceHint": ("t", lambda: self.idle[1]),
                },
                introspection=SESSION_XML,
            ),
        )
        service.add_interface(
            LOGIN1_PATH,
            Interface(
                MANAGER,
                {
                    "Inhibit": self.inhibit,
                    # Recorded only: a fake machine does not sleep.
                    "Suspend": lambda _: Reply(),
                    "CanSuspend": lambda _: Reply("s", ("yes",)),
                    "GetSessionByPID": lambda _: Reply("o", (SESSION_PATH,)),
                },
                properties={"PreparingForSleep": ("b", lambda: self.preparing_for_sleep)},
                introspection=MANAGER_XML,
            ),
        )
        service.add_interface(
            CONTROL_PATH,
            control_interface(
                {
                    "EmitPrepareForSleep": self.emit_prepare_for_sleep,
                    "CountInhibitors": lambda _: Reply("u", (self.count_inhibitors(),)),
                    "SetIdleHint": self.set_idle_hint,
                    "EmitUnlock": self.emit_unlock,
                },
                CONTROL_XML,
            ),
        )

    def inhibit(self, _msg: Message) -> Reply:
        read_end, write_end = os.pipe()
        self.inhibitors.append(read_end)
        # Our copy of the write end must go once it is on its way, or the lock would never end.
        return Reply("h", (write_end,), after_send=lambda: os.close(write_end))

    def count_inhibitors(self) -> int:
        held = []
        for fd in self.inhibitors:
            readable, _, _ = select.select([fd], [], [], 0)
            if readable and not os.read(fd, 1):  # EOF: every copy of the write end is closed
                os.close(fd)
            else:
                held.append(fd)
        self.inhibitors = held
        return len(held)

    def set_idle_hint(self, msg: Message) -> Reply:
        self.idle = (bool(msg.body[0]), int(msg.body[1]))
        return Reply("b", (self.idle[0],))

    def emit_prepare_for_sleep(self, msg: Message) -> Reply:
        going_to_sleep: bool = msg.body[0]
        self.preparing_for_sleep = going_to_sleep
        body: tuple[Any, ...] = (going_to_sleep,)
        self.service.emit(LOGIN1_PATH, MANAGER, "PrepareForSleep", "b", body)
        return Reply("d", (time.monotonic(),))

    def emit_unlock(self, _msg: Message) -> Reply:
        self.service.emit(SESSION_PATH, SESSION, "Unlock", None, ())
        return Reply("d", (time.monotonic(),))


def main() -> None:
    serve(__doc__, [LOGIN1], lambda service, _: FakeLogind(service), enable_fds=True)


if __name__ == "__main__":
    main()
