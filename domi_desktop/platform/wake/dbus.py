"""One blocking D-Bus call on a private jeepney connection (the wake's calls are rare: an arm, a
look at the session before a sleep), so a bus that went away or came back is simply used as it is
now."""

from __future__ import annotations

from typing import Any

CALL_TIMEOUT = 5.0
PROPERTIES = "org.freedesktop.DBus.Properties"


def call(
    bus: str,
    bus_name: str,
    path: str,
    interface: str,
    member: str,
    signature: str | None = None,
    body: tuple[Any, ...] = (),
    *,
    conn: Any = None,
) -> Any:
    """The reply's body; ``bus`` is ``SESSION``, ``SYSTEM`` or an address (``conn``: reuse that
    connection instead). Raises what jeepney raises (``DBusErrorResponse``, ``OSError``...)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection
    from jeepney.wrappers import unwrap_msg

    message = new_method_call(
        DBusAddress(path, bus_name=bus_name, interface=interface), member, signature, body
    )
    if conn is not None:
        return unwrap_msg(conn.send_and_get_reply(message, timeout=CALL_TIMEOUT))
    with open_dbus_connection(bus) as own:
        return unwrap_msg(own.send_and_get_reply(message, timeout=CALL_TIMEOUT))


def get_property(bus: str, bus_name: str, path: str, interface: str, name: str) -> Any:
    """A property's value (the variant unwrapped)."""
    return call(bus, bus_name, path, PROPERTIES, "Get", "ss", (interface, name))[0][1]
