"""Calls and signals of D-Bus services (logind, NetworkManager, UDisks2, a screen locker) over
jeepney, which the keyring already brings on Linux.

Not QtDBus: PySide6's cannot take apart the nested values these services answer with (UDisks2's
``a{oa{sa{sv}}}``, NetworkManager's ``ay`` SSIDs), and its connections are served by a thread of
Qt's own: a blocking QtDBus call (a disconnect) made while that thread waited for the interpreter
lock in a QObject's destructor hung the app at quit and on SIGTERM for good. Here every call is
made on a connection of its own, and signals are received by one thread per watch, owned by the
watch: ``stop`` wakes and joins it. A watch's callback runs on that thread: its owner posts what
it hears to the loop that needs it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
CALL_TIMEOUT = 2.0
PROPERTIES = "org.freedesktop.DBus.Properties"
LOGIND_SERVICE = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER = "org.freedesktop.login1.Manager"


class BusError(Exception):
    """The bus or the service cannot be reached or answered with an error."""


class BusUnreachable(BusError):
    """No bus at the address, or the service did not answer in time."""


class BusRefused(BusError):
    """The service answered with an error (no such property, access denied...)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        """The D-Bus error's name (``org.freedesktop.DBus.Error.ServiceUnknown``...)."""


@dataclass(frozen=True, slots=True)
class BusSignal:
    path: str
    interface: str
    member: str
    body: tuple[Any, ...]


def system_bus_address() -> str:
    """Read at each use, not once: a bus that appears after the app started is used."""
    return os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS


def session_bus_address() -> str | None:
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS") or None


def _open(address: str | None, fds: bool = False) -> Any:
    from jeepney.io.blocking import open_dbus_connection

    bus = address or system_bus_address()
    try:
        return open_dbus_connection(bus, enable_fds=fds)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        raise BusUnreachable(f"no bus at {bus} ({error})") from None


class BusCaller:
    """Method calls on one connection of its own, closed on leaving the ``with`` block: a read
    now and then (at a wake) keeps no connection open between reads. ``address``: the system
    bus's when None; ``fds``: replies may carry file descriptors (logind's ``Inhibit``)."""

    def __init__(self, address: str | None = None, *, fds: bool = False) -> None:
        self._address = address
        self._fds = fds
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
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call

        if self._conn is None:
            self._conn = _open(self._address, self._fds)
        address = DBusAddress(path, bus_name=service, interface=interface)
        message = new_method_call(address, member, signature or None, args)
        try:
            reply = self._conn.send_and_get_reply(message, timeout=CALL_TIMEOUT)
        except (OSError, TimeoutError, EOFError, ConnectionError) as error:
            raise BusUnreachable(f"{service} did not answer {member} ({error!r})") from None
        if reply.header.message_type == MessageType.error:
            name = str(reply.header.fields.get(HeaderFields.error_name, ""))
            raise BusRefused(name, f"{service}: {member}: {' '.join(map(str, reply.body))}")
        return tuple(reply.body)

    def get(self, service: str, path: str, interface: str, prop: str) -> Any:
        """One property's value (its variant unwrapped)."""
        body = self.call(service, path, PROPERTIES, "Get", "ss", interface, prop)
        return body[0][1]


class SignalWatch:
    """A thread that calls ``on_signal`` with each signal matching ``rules``, until ``stop``."""

    def __init__(
        self,
        rules: Sequence[dict[str, str]],
        on_signal: Callable[[BusSignal], None],
        address: str | None = None,
        name: str = "domi-dbus-watch",
    ) -> None:
        from jeepney import DBusAddress, new_method_call

        self._conn = _open(address)
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
            raise BusError(f"cannot listen on the bus ({error!r})") from None
        self._on_signal = on_signal
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from jeepney import HeaderFields, MessageType

        while not self._stopping.is_set():
            try:
                message = self._conn.receive()
            except (OSError, EOFError, ConnectionError, ValueError):
                return  # stopped (the socket was shut down) or the bus went away
            header = message.header
            if header.message_type != MessageType.signal or self._stopping.is_set():
                continue
            fields = header.fields
            heard = BusSignal(
                str(fields.get(HeaderFields.path, "")),
                str(fields.get(HeaderFields.interface, "")),
                str(fields.get(HeaderFields.member, "")),
                tuple(message.body),
            )
            try:
                self._on_signal(heard)
            except Exception:  # a broken listener must not end the watch
                log.exception("a D-Bus signal listener failed on %s", heard.member)

    def stop(self) -> None:
        self._stopping.set()
        # Wakes the blocked receive at once: closing alone does not on Linux.
        with contextlib.suppress(OSError):
            self._conn.sock.shutdown(socket.SHUT_RDWR)
        if self._thread is not threading.current_thread():
            self._thread.join(CALL_TIMEOUT)
        self._conn.close()
