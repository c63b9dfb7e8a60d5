"""Reading and watching a system service over D-Bus with jeepney, for the resource conditions.

PySide6's QtDBus cannot take apart the nested values these services answer with (UDisks2's
``a{oa{sa{sv}}}``, NetworkManager's ``ay`` SSIDs: ``QDBusArgument.beginMap`` on a reply fails
with "write from a read-only object"), so the readers use jeepney, which the keyring already
brings on Linux. Calls are made on a connection of their own; signals are received by one thread
per watch, which only says "changed" (the ``on_change`` of a ``ConditionSource`` may be called
from any thread: the runtime posts it to its loop).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
CALL_TIMEOUT = 2.0
PROPERTIES = "org.freedesktop.DBus.Properties"


class BusError(Exception):
    """The bus or the service cannot be reached or answered with an error."""


def system_bus_address() -> str:
    return os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS


def _open() -> Any:
    from jeepney.io.blocking import open_dbus_connection

    try:
        return open_dbus_connection(system_bus_address())
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        raise BusError(f"no system bus ({error})") from None


class BusCaller:
    """Method calls on one connection of its own, closed on leaving the ``with`` block: a read
    now and then (at a wake) keeps no connection open between reads."""

    def __init__(self) -> None:
        self._conn: Any = None

    def __enter__(self) -> BusCaller:
        return self

    def __exit__(self, *_: object) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def call(
        self, service: str, path: str, interface: str, member: str, signature: str = "", *args: Any
    ) -> tuple[Any, ...]:
        from jeepney import DBusAddress, MessageType, new_method_call

        if self._conn is None:
            self._conn = _open()
        address = DBusAddress(path, bus_name=service, interface=interface)
        message = new_method_call(address, member, signature or None, args)
        try:
            reply = self._conn.send_and_get_reply(message, timeout=CALL_TIMEOUT)
        except (OSError, TimeoutError, EOFError, ConnectionError) as error:
            raise BusError(f"{service} did not answer {member} ({error!r})") from None
        if reply.header.message_type == MessageType.error:
            raise BusError(f"{service}: {member}: {' '.join(map(str, reply.body))}")
        return tuple(reply.body)

    def get(self, service: str, path: str, interface: str, prop: str) -> Any:
        """One property's value (its variant unwrapped)."""
        body = self.call(service, path, PROPERTIES, "Get", "ss", interface, prop)
        return body[0][1]


class SignalWatch:
    """A thread that calls ``on_change`` for each signal matching ``rules``, until ``stop``."""

    def __init__(self, rules: Sequence[dict[str, str]], on_change: Callable[[], None]) -> None:
        from jeepney import DBusAddress, new_method_call

        self._conn = _open()
        bus = DBusAddress(
            "/org/freedesktop/DBus",
            bus_name="org.freedesktop.DBus",
            interface="org.freedesktop.DBus",
        )
        try:
            for rule in rules:
                text = ",".join(["type='signal'", *(f"{k}='{v}'" for k, v in rule.items())])
                self._conn.send_and_get_reply(
                    new_method_call(bus, "AddMatch", "s", (text,)), timeout=CALL_TIMEOUT
                )
        except (OSError, TimeoutError, EOFError, ConnectionError) as error:
            self._conn.close()
            raise BusError(f"cannot listen on the system bus ({error!r})") from None
        self._on_change = on_change
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="domi-dbus-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from jeepney import MessageType

        while not self._stopping.is_set():
            try:
                message = self._conn.receive()
            except (OSError, EOFError, ConnectionError, ValueError):
                return  # stopped (the socket was shut down) or the bus went away
            if message.header.message_type == MessageType.signal and not self._stopping.is_set():
                try:
                    self._on_change()
                except Exception:  # a broken listener must not end the watch
                    log.exception("a D-Bus change listener failed")

    def stop(self) -> None:
        self._stopping.set()
        # Wakes the blocked receive at once: closing alone does not on Linux.
        with contextlib.suppress(OSError):
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(CALL_TIMEOUT)
        self._conn.close()
