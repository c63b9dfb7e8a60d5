"""Changeable D-Bus properties for the fakes of system services (NetworkManager, UPower).

A PropertySet holds one interface's property values, serves them through fakebus (Get/GetAll and
the <property> elements of Introspect, which QDBusInterface needs before it reads a property) and
announces changes with org.freedesktop.DBus.Properties.PropertiesChanged, as the real daemons do.
The test drives a fake through one control method, `Update(a{sv}) -> d`, whose keys the fake
validates with `check_update` so that a typo fails loudly instead of changing nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fakebus import PROPERTIES, BusService, Failure, Handler, Interface, Reply
from jeepney import Message

INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"

UPDATE_XML = """
<method name="Update">
  <arg name="changes" type="a{sv}" direction="in"/><arg name="sent_at" type="d" direction="out"/>
</method>
"""


class PropertySet:
    def __init__(
        self,
        service: BusService,
        path: str,
        interface: str,
        signatures: Mapping[str, str],
        values: Mapping[str, Any],
    ) -> None:
        self.service = service
        self.path = path
        self.interface = interface
        self.signatures = dict(signatures)
        self.values = dict(values)

    def serve(
        self,
        methods: dict[str, Handler] | None = None,
        methods_xml: str = "",
        *,
        recorded: bool = True,
    ) -> None:
        properties = {name: (sig, self._getter(name)) for name, sig in self.signatures.items()}
        xml = methods_xml + "".join(
            f'<property name="{name}" type="{sig}" access="read"/>'
            for name, sig in self.signatures.items()
        )
        self.service.add_interface(
            self.path,
            Interface(self.interface, methods or {}, properties, xml, recorded=recorded),
        )

    def _getter(self, name: str) -> Callable[[], Any]:
        return lambda: self.values[name]

    def set(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Store the values; announce those that differ. Returns the changed ones."""
        changed = {k: v for k, v in changes.items() if self.values.get(k) != v}
        self.values.update(changes)
        if changed:
            body: tuple[Any, ...] = (
                self.interface,
                {name: (self.signatures[name], value) for name, value in changed.items()},
                [],
            )
            self.service.emit(self.path, PROPERTIES, "PropertiesChanged", "sa{sv}as", body)
        return changed


def check_update(msg: Message, allowed: Mapping[str, str]) -> dict[str, Any] | Failure:
    """The a{sv} argument of Update as {key: value}, or a Failure naming the bad key or type."""
    changes: dict[str, Any] = {}
    for key, (signature, value) in msg.body[0].items():
        if key not in allowed:
            return Failure(INVALID_ARGS, f"Update: unknown key {key!r}; known: {sorted(allowed)}")
        if signature != allowed[key]:
            return Failure(
                INVALID_ARGS, f"Update: {key} must have type {allowed[key]!r}, not {signature!r}"
            )
        changes[key] = value
    return changes


def sent_at(started: float) -> Reply:
    """The answer to Update: when the first signal went out (taken just before sending)."""
    return Reply("d", (started,))
