"""Linux power: UPower on the system bus, over QtDBus.

``OnBattery`` of the daemon says mains or battery; the display device (the composite battery a
desktop shows) gives the charge when ``IsPresent``. A machine without UPower or without a battery
counts as on mains. Changes arrive as ``PropertiesChanged`` on either object.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import SLOT, QObject, Slot
from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusVariant

from domi_desktop.platform.conditions.base import PowerReading

UPOWER_SERVICE = "org.freedesktop.UPower"
UPOWER_PATH = "/org/freedesktop/UPower"
UPOWER = "org.freedesktop.UPower"
DISPLAY_DEVICE_PATH = f"{UPOWER_PATH}/devices/DisplayDevice"
DEVICE = "org.freedesktop.UPower.Device"
PROPERTIES = "org.freedesktop.DBus.Properties"
DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
CALL_TIMEOUT_MS = 2000

_connection_ids = itertools.count(1)


class UPowerReader(QObject):
    """Reads on a private connection to ``$DBUS_SYSTEM_BUS_ADDRESS`` (as the resume source does)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._connection_name: str | None = None
        self._on_change: Callable[[], None] | None = None

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        name, bus = _connect()
        if not bus.isConnected():
            self.status = f"no system bus (UPower unavailable): {bus.lastError().message()}"
            QDBusConnection.disconnectFromBus(name)
            return False
        for path in (UPOWER_PATH, DISPLAY_DEVICE_PATH):
            # A QObject slot named by SLOT(): PySide6 connects D-Bus signals to nothing else.
            if not bus.connect(  # type: ignore[call-overload]
                UPOWER_SERVICE, path, PROPERTIES, "PropertiesChanged", self, SLOT("onChanged()")
            ):
                self.status = f"cannot listen to UPower: {bus.lastError().message()}"
                QDBusConnection.disconnectFromBus(name)
                return False
        self._connection_name = name
        self._on_change = on_change
        self.status = "listening to UPower"
        return True

    def stop(self) -> None:
        if self._connection_name is not None:
            bus = QDBusConnection(self._connection_name)
            # Unhook the slot before the connection goes: a PropertiesChanged still in flight on
            # the D-Bus thread would otherwise be delivered to this object after it was freed.
            for path in (UPOWER_PATH, DISPLAY_DEVICE_PATH):
                bus.disconnect(  # type: ignore[call-overload]
                    UPOWER_SERVICE, path, PROPERTIES, "PropertiesChanged", self, SLOT("onChanged()")
                )
            QDBusConnection.disconnectFromBus(self._connection_name)
        self._connection_name = None
        self._on_change = None

    def read(self) -> PowerReading:
        if self._connection_name is not None:
            return self._read(QDBusConnection(self._connection_name))
        name, bus = _connect()
        try:
            return self._read(bus)
        finally:
            QDBusConnection.disconnectFromBus(name)

    def _read(self, bus: QDBusConnection) -> PowerReading:
        on_battery = _get(bus, UPOWER_PATH, UPOWER, "OnBattery")
        if not isinstance(on_battery, bool):
            return PowerReading()
        present = _get(bus, DISPLAY_DEVICE_PATH, DEVICE, "IsPresent")
        percentage = _get(bus, DISPLAY_DEVICE_PATH, DEVICE, "Percentage")
        percent = round(percentage) if present is True and isinstance(percentage, float) else None
        return PowerReading(on_ac=not on_battery, battery_percent=percent)

    @Slot()
    def onChanged(self) -> None:
        """Called by QtDBus only."""
        if self._on_change is not None:
            self._on_change()


def _connect() -> tuple[str, QDBusConnection]:
    address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS
    name = f"domi-desktop-upower-{next(_connection_ids)}"
    return name, QDBusConnection.connectToBus(address, name)


def _get(bus: QDBusConnection, path: str, interface: str, prop: str) -> Any:
    """The property's value, ``None`` when it cannot be read."""
    call = QDBusMessage.createMethodCall(UPOWER_SERVICE, path, PROPERTIES, "Get")
    call.setArguments([interface, prop])
    reply = bus.call(call, timeout=CALL_TIMEOUT_MS)
    values = reply.arguments()
    if reply.type() != QDBusMessage.MessageType.ReplyMessage or not values:
        return None
    value = values[0]
    return value.variant() if isinstance(value, QDBusVariant) else value
