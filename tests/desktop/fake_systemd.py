"""A fake systemd user manager: `org.freedesktop.systemd1` on the session bus.

    python tests/desktop/fake_systemd.py [--address ADDRESS] [--log calls.jsonl] [--version V]

Serves /org/freedesktop/systemd1, interface `org.freedesktop.systemd1.Manager`:
`StartTransientUnit(ssa(sv)a(sa(sv))) -> o` (a unit of a name already loaded fails with
`org.freedesktop.systemd1.UnitExists`, as systemd's does), `StopUnit(ss) -> o` (an unknown unit
fails with `org.freedesktop.systemd1.NoSuchUnit`), `ListUnitsByPatterns(asas)` (the loaded units
whose names match, states not looked at) and the `Version` property (--version, default
255.4-1). Records every call as one JSON line (the properties as [name, value] pairs), prints READY
once it owns the name and exits when the bus goes away.

Whether it holds CAP_WAKE_ALARM is the process's own: run it under `capsh --drop=cap_wake_alarm`
for a manager without.
"""

from __future__ import annotations

import argparse
import fnmatch
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import BusService, Failure, Interface, Reply, serve
from jeepney import Message

SYSTEMD = "org.freedesktop.systemd1"
SYSTEMD_PATH = "/org/freedesktop/systemd1"
MANAGER = "org.freedesktop.systemd1.Manager"

MANAGER_XML = """
<method name="StartTransientUnit">
  <arg name="name" type="s" direction="in"/><arg name="mode" type="s" direction="in"/>
  <arg name="properties" type="a(sv)" direction="in"/>
  <arg name="aux" type="a(sa(sv))" direction="in"/><arg name="job" type="o" direction="out"/>
</method>
<method name="StopUnit">
  <arg name="name" type="s" direction="in"/><arg name="mode" type="s" direction="in"/>
  <arg name="job" type="o" direction="out"/>
</method>
<method name="ListUnitsByPatterns">
  <arg name="states" type="as" direction="in"/><arg name="patterns" type="as" direction="in"/>
  <arg name="units" type="a(ssssssouso)" direction="out"/>
</method>
<property name="Version" type="s" access="read"/>
"""


class FakeSystemd:
    def __init__(self, service: BusService, version: str) -> None:
        self.units: set[str] = set()
        self.jobs = 0
        service.add_interface(
            SYSTEMD_PATH,
            Interface(
                MANAGER,
                {
                    "StartTransientUnit": self.start,
                    "StopUnit": self.stop,
                    "ListUnitsByPatterns": self.list_units,
                },
                properties={"Version": ("s", lambda: version)},
                introspection=MANAGER_XML,
            ),
        )

    def _job(self) -> Reply:
        self.jobs += 1
        return Reply("o", (f"{SYSTEMD_PATH}/job/{self.jobs}",))

    def start(self, msg: Message) -> Reply | Failure:
        name: str = msg.body[0]
        aux: list[tuple[str, Any]] = msg.body[3]
        if name in self.units:
            return Failure(f"{SYSTEMD}.UnitExists", f"Unit {name} was already loaded.")
        self.units.add(name)
        self.units.update(unit for unit, _ in aux)
        return self._job()

    def list_units(self, msg: Message) -> Reply:
        patterns: list[str] = msg.body[1]
        units = [
            (name, "", "loaded", "active", "waiting", "", "/", 0, "", "/")
            for name in sorted(self.units)
            if not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)
        ]
        return Reply("a(ssssssouso)", (units,))

    def stop(self, msg: Message) -> Reply | Failure:
        name: str = msg.body[0]
        if name not in self.units:
            return Failure(f"{SYSTEMD}.NoSuchUnit", f"Unit {name} not loaded.")
        self.units.discard(name)
        return self._job()


def main() -> None:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--version", default="255.4-1", help="the manager's Version property")

    serve(
        __doc__, [SYSTEMD], lambda service, args: FakeSystemd(service, args.version),
        bus="DBUS_SESSION_BUS_ADDRESS", options=options,
    )  # fmt: skip


if __name__ == "__main__":
    main()
