"""Linux power: UPower on the system bus (``platform.dbus``).

``OnBattery`` of the daemon says mains or battery; the display device (the composite battery a
desktop shows) gives the charge when ``IsPresent``. A machine without UPower or without a battery
counts as on mains. Changes arrive as ``PropertiesChanged`` on either object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domi_desktop.platform.conditions.base import PowerReading
from domi_desktop.platform.dbus import PROPERTIES, BusCaller, BusError, BusRefused, SignalWatch

UPOWER_SERVICE = "org.freedesktop.UPower"
UPOWER_PATH = "/org/freedesktop/UPower"
UPOWER = "org.freedesktop.UPower"
DISPLAY_DEVICE_PATH = f"{UPOWER_PATH}/devices/DisplayDevice"
DEVICE = "org.freedesktop.UPower.Device"
RULES = [
    {"path": path, "interface": PROPERTIES, "member": "PropertiesChanged"}
    for path in (UPOWER_PATH, DISPLAY_DEVICE_PATH)
]


class UPowerReader:
    """Reads on a connection of its own each time; changes heard by a watch thread."""

    def __init__(self) -> None:
        self.status = "not started"
        self._watch: SignalWatch | None = None

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        try:
            with BusCaller() as bus:
                bus.get(UPOWER_SERVICE, UPOWER_PATH, UPOWER, "OnBattery")
            self._watch = SignalWatch(RULES, lambda _signal: on_change(), None, "domi-upower")
        except BusError as error:
            self.status = f"UPower unavailable: {error}"
            return False
        self.status = "listening to UPower"
        return True

    def stop(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()

    def read(self) -> PowerReading:
        try:
            with BusCaller() as bus:
                on_battery = _get(bus, UPOWER_PATH, UPOWER, "OnBattery")
                if not isinstance(on_battery, bool):
                    return PowerReading()
                present = _get(bus, DISPLAY_DEVICE_PATH, DEVICE, "IsPresent")
                percentage = _get(bus, DISPLAY_DEVICE_PATH, DEVICE, "Percentage")
        except BusError:
            return PowerReading()
        percent = round(percentage) if present is True and isinstance(percentage, float) else None
        return PowerReading(on_ac=not on_battery, battery_percent=percent)


def _get(bus: BusCaller, path: str, interface: str, prop: str) -> Any:
    """The property's value, ``None`` when the service answers with an error."""
    try:
        return bus.get(UPOWER_SERVICE, path, interface, prop)
    except BusRefused:
        return None
