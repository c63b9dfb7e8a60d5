"""Network names where the OS has no bus to watch (Windows, macOS): the Wi-Fi name read from the
OS's Wi-Fi API (``winwlan``, ``macwifi``), ``ethernet`` when Qt says the machine is wired, and a
re-read whenever Qt says the network changed (a new network is a drop and a reconnect, and the
transport medium changes with a cable), for ``network_name``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtNetwork import QNetworkInformation

from domi_desktop.platform.conditions.base import NetworkReader
from domi_desktop.platform.conditions.network import QtNetworkReader
from domi_desktop.scheduler.resources import ETHERNET

NO_LOCATION = (
    "macOS gives the Wi-Fi name only to apps allowed Location Services (macOS 14 and later): "
    "allow domi-desktop in System Settings > Privacy & Security > Location Services"
)


class WifiRead(Protocol):
    """The Wi-Fi names the machine is on; ``OSError`` saying why when they cannot be read."""

    hidden: bool
    """After a call: the OS kept the names from the app (macOS without Location Services)."""

    def __call__(self) -> frozenset[str]: ...


def qt_on_ethernet() -> bool:
    """Whether Qt's network information, once ``start`` has loaded it, says the machine is wired.
    It is not loaded here: a read is on the loop thread, and under Wine 8 the load did not
    return in 5 minutes."""
    info = QNetworkInformation.instance()
    return (
        info is not None
        and info.supports(QNetworkInformation.Feature.TransportMedium)
        and info.transportMedium() == QNetworkInformation.TransportMedium.Ethernet
    )


class WifiNames:
    def __init__(
        self,
        wifi: WifiRead,
        *,
        wired: Callable[[], bool] = qt_on_ethernet,
        changes: NetworkReader | None = None,
    ) -> None:
        self.status = "not started"
        self.hidden = False
        self._wifi = wifi
        self._wired = wired
        self._changes = changes

    def read(self) -> frozenset[str]:
        names: set[str] = set()
        try:
            names |= self._wifi()
        except OSError as error:
            self.status = f"cannot read the Wi-Fi name: {error}"
        self.hidden = self._wifi.hidden
        if self.hidden:
            self.status = NO_LOCATION
        if self._wired():
            names.add(ETHERNET)
        return frozenset(names)

    def start(self, on_change: Callable[[], None]) -> bool:
        if self._changes is None:
            self._changes = QtNetworkReader()
        started = self._changes.start(on_change)
        self.status = (
            "the Wi-Fi name re-read when Qt says the network changed"
            if started
            else f"the Wi-Fi name read each minute ({self._changes.status})"
        )
        return started

    def stop(self) -> None:
        if self._changes is not None:
            self._changes.stop()
