"""A tiny D-Bus service framework on jeepney's blocking I/O, shared by the fake desktop services.

The fakes (`fake_desktop.py`, `fake_logind.py`) run as separate processes: Qt's `showMessage` blocks
its GUI thread until `Notify` is answered, so a stub inside the test process (which the GUI thread
would hold the GIL against) cannot answer it. One thread, one blocking connection, one loop: every
incoming method call is recorded as a JSON line, answered (now or after a delay), and the loop ends
when the bus goes away.

Every fake also serves a private control interface (`CONTROL_INTERFACE` at `CONTROL_PATH`, on the
fake's well-known name) through which a test asks it to emit signals. Control calls are not
recorded: the log is what the application under test did.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from jeepney import DBusAddress, HeaderFields, Message, MessageType, new_error, new_signal
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.wrappers import new_method_call, new_method_return

CONTROL_PATH = "/org/domi/Test"
CONTROL_INTERFACE = "org.domi.Test"

BUS_NAME = "org.freedesktop.DBus"
BUS_PATH = "/org/freedesktop/DBus"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
PEER = "org.freedesktop.DBus.Peer"


# --- making D-Bus values JSON-able, driven by the signature (a struct and a variant are both
# --- tuples once jeepney has parsed them, so the value alone cannot tell them apart)


def split_signature(signature: str) -> list[str]:
    """Split a signature into its complete types: 'susa{sv}' -> ['s', 'u', 's', 'a{sv}']."""
    types: list[str] = []
    i = 0
    while i < len(signature):
        end = _complete_type_end(signature, i)
        types.append(signature[i:end])
        i = end
    return types


def _complete_type_end(signature: str, start: int) -> int:
    char = signature[start]
    if char == "a":
        return _complete_type_end(signature, start + 1)
    if char in "({":
        closer = ")" if char == "(" else "}"
        depth = 0
        for i in range(start, len(signature)):
            if signature[i] in "({":
                depth += 1
            elif signature[i] in ")}":
                depth -= 1
                if depth == 0:
                    if signature[i] != closer:
                        raise ValueError(f"unbalanced signature {signature!r}")
                    return i + 1
        raise ValueError(f"unbalanced signature {signature!r}")
    return start + 1


def to_json(signature: str, value: Any) -> Any:
    """One D-Bus value as JSON: variants unwrapped, byte arrays as {"bytes": length}.

    Variants are unwrapped so that a test can write `hints["urgency"] == 1`; byte arrays (icon
    pixmaps in Notify hints) are summarised so that the log stays one short line per call.
    """
    head = signature[0]
    if head == "v":
        inner_signature, inner = value
        return to_json(inner_signature, inner)
    if head == "a":
        element = signature[1:]
        if element == "y":
            return {"bytes": len(value)}
        if element.startswith("{"):
            key_sig, value_sig = split_signature(element[1:-1])
            return {str(to_json(key_sig, k)): to_json(value_sig, v) for k, v in value.items()}
        return [to_json(element, item) for item in value]
    if head == "(":
        fields = split_signature(signature[1:-1])
        return [to_json(sig, item) for sig, item in zip(fields, value, strict=True)]
    if head == "h":
        # A received file descriptor: we do not keep it, and its number means nothing elsewhere.
        value.close()
        return "<fd>"
    return value


def body_to_json(signature: str, body: Iterable[Any]) -> list[Any]:
    return [to_json(sig, item) for sig, item in zip(split_signature(signature), body, strict=True)]


# --- replies


@dataclass(frozen=True)
class Reply:
    signature: str | None = None
    body: tuple[Any, ...] = ()
    delay: float = 0.0  # seconds before the answer is sent; the loop keeps serving meanwhile
    after_send: Callable[[], None] | None = None  # e.g. close our copy of a passed file descriptor


@dataclass(frozen=True)
class Failure:
    name: str
    text: str


Handler = Callable[[Message], Reply | Failure]


@dataclass
class Interface:
    """Methods (member -> handler) and properties (name -> (signature, getter)) of one interface."""

    name: str
    methods: dict[str, Handler] = field(default_factory=dict)
    properties: dict[str, tuple[str, Callable[[], Any]]] = field(default_factory=dict)
    introspection: str = ""  # the <method>/<signal>/<property> elements, for Introspect
    recorded: bool = True


class BusService:
    """Owns well-known names, serves interfaces at object paths, records calls, emits signals."""

    def __init__(self, conn: DBusConnection, names: list[str], log: IO[str]) -> None:
        self.conn = conn
        self.names = names
        self.log = log
        self.objects: dict[str, dict[str, Interface]] = {}
        self.owned: set[str] = set()
        self.ready = False
        self.name_owner_changed: list[Callable[[str, str, str], None]] = []
        # Delayed replies: (monotonic due time, reply, what to do once it is sent).
        self._pending: list[tuple[float, Message, Callable[[], None] | None]] = []

    # -- setup

    def add_interface(self, path: str, interface: Interface) -> None:
        self.objects.setdefault(path, {})[interface.name] = interface

    def watch_name_owners(self, callback: Callable[[str, str, str], None]) -> None:
        """Call back with (name, old_owner, new_owner) on every NameOwnerChanged."""
        self.name_owner_changed.append(callback)
        rule = f"type='signal',sender='{BUS_NAME}',interface='{BUS_NAME}',member='NameOwnerChanged'"
        self._bus_call("AddMatch", "s", (rule,))

    def _bus_call(self, member: str, signature: str, body: tuple[Any, ...]) -> None:
        # Fire and forget: the answers (and errors) are handled in the main loop.
        bus = DBusAddress(BUS_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
        self.conn.send(new_method_call(bus, member, signature, body))

    # -- running

    def run(self) -> None:
        """Serve until the bus connection closes (or SIGTERM/SIGINT)."""
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        for name in self.names:
            # Flags 0: queue behind a previous owner (the fake of the previous test may not have
            # been noticed as gone by the daemon yet); NameAcquired tells us when it is ours.
            self._bus_call("RequestName", "su", (name, 0))
        while True:
            timeout = None
            if self._pending:
                timeout = max(0.0, min(item[0] for item in self._pending) - time.monotonic())
            try:
                msg = self.conn.receive(timeout=timeout)
            except TimeoutError:
                self._send_due_replies()
                continue
            except (ConnectionError, EOFError, OSError):
                return  # the bus went away: so do we
            self._dispatch(msg)
            self._send_due_replies()

    def _send_due_replies(self) -> None:
        now = time.monotonic()
        due = [item for item in self._pending if item[0] <= now]
        for item in due:
            self._pending.remove(item)
            self._send(item[1], item[2])

    def _send(self, msg: Message, after_send: Callable[[], None] | None) -> None:
        self.conn.send(msg)
        if after_send is not None:
            after_send()

    def _dispatch(self, msg: Message) -> None:
        fields = msg.header.fields
        kind = msg.header.message_type
        if kind == MessageType.signal:
            if fields.get(HeaderFields.sender) == BUS_NAME:
                self._bus_signal(fields.get(HeaderFields.member), msg.body)
            return
        if kind == MessageType.error:
            print(f"fake: error from the bus: {msg.body}", file=sys.stderr, flush=True)
            return
        if kind != MessageType.method_call:
            return
        self._method_call(msg)

    def _bus_signal(self, member: str | None, body: tuple[Any, ...]) -> None:
        if member == "NameAcquired" and body[0] in self.names:
            self.owned.add(body[0])
            if not self.ready and self.owned.issuperset(self.names):
                self.ready = True
                print("READY", flush=True)
        elif member == "NameLost":
            self.owned.discard(body[0])
            print(f"fake: lost the name {body[0]}", file=sys.stderr, flush=True)
        elif member == "NameOwnerChanged":
            for callback in self.name_owner_changed:
                callback(*body)

    def _method_call(self, msg: Message) -> None:
        fields = msg.header.fields
        path = fields.get(HeaderFields.path, "")
        interface_name = fields.get(HeaderFields.interface)
        member = fields.get(HeaderFields.member, "")
        signature = fields.get(HeaderFields.signature, "")
        interfaces = self.objects.get(path, {})
        interface = self._find_interface(interfaces, interface_name, member)
        if interface is None or interface.recorded:
            self._record(msg, path, interface_name, member, signature)

        result: Reply | Failure
        if member == "Ping" and interface_name in (PEER, None):
            result = Reply()
        elif interface_name == INTROSPECTABLE or (
            interface_name is None and member == "Introspect"
        ):
            result = self._introspect(path)
        elif not interfaces:
            result = Failure("org.freedesktop.DBus.Error.UnknownObject", f"no object at {path}")
        elif interface_name == PROPERTIES:
            result = self._properties(interfaces, member, msg.body)
        elif interface is None or member not in interface.methods:
            result = Failure(_UNKNOWN_METHOD, f"{interface_name}.{member} is not implemented")
        else:
            try:
                result = interface.methods[member](msg)
            except Exception as exc:
                print(f"fake: {member} failed: {exc!r}", file=sys.stderr, flush=True)
                result = Failure("org.freedesktop.DBus.Error.Failed", repr(exc))
        self._answer(msg, result)

    @staticmethod
    def _find_interface(
        interfaces: dict[str, Interface], name: str | None, member: str
    ) -> Interface | None:
        if name is not None:
            return interfaces.get(name)
        # The interface header is optional on method calls: pick the one with such a method.
        return next((i for i in interfaces.values() if member in i.methods), None)

    def _answer(self, msg: Message, result: Reply | Failure) -> None:
        if msg.header.flags & 1:  # NO_REPLY_EXPECTED
            return
        if isinstance(result, Failure):
            self.conn.send(new_error(msg, result.name, "s", (result.text,)))
            return
        reply = new_method_return(msg, result.signature, result.body)
        if result.delay > 0:
            self._pending.append((time.monotonic() + result.delay, reply, result.after_send))
        else:
            self._send(reply, result.after_send)

    def _record(
        self, msg: Message, path: str, interface: str | None, member: str, signature: str
    ) -> None:
        try:
            args = body_to_json(signature, msg.body)
        except Exception as exc:  # never lose a call because its arguments are odd
            args = [f"<unrecordable: {exc!r}>"]
        entry = {
            "t": time.monotonic(),
            "sender": msg.header.fields.get(HeaderFields.sender),
            "path": path,
            "interface": interface,
            "method": member,
            "signature": signature,
            "args": args,
        }
        self.log.write(json.dumps(entry) + "\n")
        self.log.flush()

    def _introspect(self, path: str) -> Reply | Failure:
        interfaces = self.objects.get(path)
        children = sorted(
            {
                p[len(path) :].strip("/").split("/")[0]
                for p in self.objects
                if p != path and p.startswith(path.rstrip("/") + "/")
            }
        )
        if interfaces is None and not children:
            return Failure("org.freedesktop.DBus.Error.UnknownObject", f"no object at {path}")
        parts = [
            '<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"',
            ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">',
            "<node>",
            f'<interface name="{INTROSPECTABLE}"><method name="Introspect">'
            '<arg name="xml_data" type="s" direction="out"/></method></interface>',
            f'<interface name="{PROPERTIES}">'
            '<method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/>'
            '<arg type="v" direction="out"/></method>'
            '<method name="GetAll"><arg type="s" direction="in"/>'
            '<arg type="a{sv}" direction="out"/></method>'
            '<method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/>'
            '<arg type="v" direction="in"/></method>'
            '<signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/>'
            '<arg type="as"/></signal></interface>',
        ]
        for interface in (interfaces or {}).values():
            parts.append(
                f'<interface name="{interface.name}">{interface.introspection}</interface>'
            )
        parts.extend(f'<node name="{child}"/>' for child in children)
        parts.append("</node>")
        return Reply("s", ("\n".join(parts),))

    def _properties(
        self, interfaces: dict[str, Interface], member: str, body: tuple[Any, ...]
    ) -> Reply | Failure:
        interface = interfaces.get(body[0]) if body else None
        if interface is None:
            return Failure("org.freedesktop.DBus.Error.UnknownInterface", repr(body[:1]))
        if member == "Get":
            prop = interface.properties.get(body[1])
            if prop is None:
                return Failure("org.freedesktop.DBus.Error.UnknownProperty", body[1])
            signature, getter = prop
            return Reply("v", ((signature, getter()),))
        if member == "GetAll":
            values = {name: (sig, getter()) for name, (sig, getter) in interface.properties.items()}
            return Reply("a{sv}", (values,))
        if member == "Set":
            return Failure("org.freedesktop.DBus.Error.PropertyReadOnly", body[1])
        return Failure(_UNKNOWN_METHOD, member)

    def emit(
        self,
        path: str,
        interface: str,
        member: str,
        signature: str | None,
        body: tuple[Any, ...],
        *,
        destination: str | None = None,
    ) -> None:
        """A signal to every matching rule, or (``destination``) to that connection only."""
        signal = new_signal(DBusAddress(path, interface=interface), member, signature, body)
        if destination is not None:
            signal.header.fields[HeaderFields.destination] = destination
        self.conn.send(signal)


_UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"


def control_interface(methods: dict[str, Handler], introspection: str) -> Interface:
    return Interface(CONTROL_INTERFACE, methods, introspection=introspection, recorded=False)


def open_log(path: str | None) -> IO[str]:
    if path is None:
        return open(os.devnull, "w", encoding="utf-8")  # lives as long as the process
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8")  # lives as long as the process


def connect(bus: str, *, enable_fds: bool = False) -> DBusConnection:
    """Connect to 'SESSION', 'SYSTEM' or a bus address, failing loudly if there is none."""
    try:
        return open_dbus_connection(bus, enable_fds=enable_fds)
    except (KeyError, OSError, TimeoutError) as exc:
        print(f"fake: cannot connect to the {bus} bus: {exc!r}", file=sys.stderr, flush=True)
        raise SystemExit(2) from exc


def serve(
    doc: str | None,
    names: list[str],
    make: Callable[[BusService, argparse.Namespace], object],
    *,
    bus: str = "DBUS_SYSTEM_BUS_ADDRESS",
    enable_fds: bool = False,
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> None:
    """A fake service's command line: ``--address`` (else ``$bus``), ``--log`` and ``options``;
    owns ``names`` on that bus, lets ``make`` build the fake on the service, and serves."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--address", help=f"bus address (default: ${bus})")
    parser.add_argument("--log", help="append one JSON line per call to this file")
    options(parser)
    args = parser.parse_args()
    address = args.address or os.environ.get(bus)
    if not address:
        parser.error(f"no bus: pass --address or set {bus}")
    with open_log(args.log) as log, connect(address, enable_fds=enable_fds) as conn:
        service = BusService(conn, names, log)
        make(service, args)
        service.run()
