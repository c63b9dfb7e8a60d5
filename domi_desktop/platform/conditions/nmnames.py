"""Linux network names: NetworkManager on the system bus, for ``network_name``.

The manager's ``ActiveConnections`` lists what the machine is on: a Wi-Fi connection's network is
the ``Ssid`` of its access point (``SpecificObject``), falling back to the connection's ``Id``
(which NetworkManager names after the SSID); any wired connection is ``ethernet``. Joining or
leaving a network changes ``ActiveConnections``: a ``PropertiesChanged`` on the manager's path,
the one signal watched (access points report their signal strength every few seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domi_desktop.platform.dbus import PROPERTIES, BusCaller, BusError, SignalWatch
from domi_desktop.scheduler.resources import ETHERNET

NM = "org.freedesktop.NetworkManager"
NM_PATH = "/org/freedesktop/NetworkManager"
ACTIVE = "org.freedesktop.NetworkManager.Connection.Active"
ACCESS_POINT = "org.freedesktop.NetworkManager.AccessPoint"
WIFI = "802-11-wireless"
WIRED = ("802-3-ethernet", "pppoe")

RULES = ({"sender": NM, "interface": PROPERTIES, "path": NM_PATH},)


def _text(raw: Any) -> str:
    if isinstance(raw, bytes | bytearray):
        return bytes(raw).decode("utf-8", "replace")
    return raw if isinstance(raw, str) else ""


class NetworkManagerNames:
    hidden = False

    def __init__(self) -> None:
        self.status = "not started"
        self._watch: SignalWatch | None = None

    def read(self) -> frozenset[str]:
        try:
            with BusCaller() as bus:
                return frozenset(self._names(bus))
        except BusError as error:
            self.status = f"cannot read the network names: {error}"
            return frozenset()

    @staticmethod
    def _names(bus: BusCaller) -> set[str]:
        found: set[str] = set()
        for path in bus.get(NM, NM_PATH, NM, "ActiveConnections") or ():
            kind = bus.get(NM, path, ACTIVE, "Type")
            if kind in WIRED:
                found.add(ETHERNET)
            elif kind == WIFI:
                point = bus.get(NM, path, ACTIVE, "SpecificObject")
                ssid = ""
                if point and point != "/":
                    ssid = _text(bus.get(NM, point, ACCESS_POINT, "Ssid"))
                found.add(ssid or _text(bus.get(NM, path, ACTIVE, "Id")))
        return found

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        try:
            self._watch = SignalWatch(RULES, lambda _signal: on_change())
        except BusError as error:
            self.status = f"cannot watch the network names: {error}"
            return False
        self.status = "watching NetworkManager's active connections"
        return True

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
        self._watch = None
