"""The network as the OS sees it, through Qt's ``QNetworkInformation``: NetworkManager on Linux,
the system's own backends on macOS and Windows (reachability, captive portal, metered).

``QNetworkInformation`` is one per process and is never unloaded: the first ``start`` loads it, and
later readers share it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QNetworkInformation

from domi_desktop.model import NetworkState
from domi_desktop.platform.conditions.base import NetworkReading

Reachability = QNetworkInformation.Reachability
Feature = QNetworkInformation.Feature

_REACHABILITY = {
    Reachability.Online: NetworkState.online,
    Reachability.Site: NetworkState.limited,
    Reachability.Local: NetworkState.limited,
    Reachability.Disconnected: NetworkState.offline,
    Reachability.Unknown: NetworkState.unknown,
}


def reading_of(info: QNetworkInformation | None) -> NetworkReading:
    if info is None:
        return NetworkReading()
    network = _REACHABILITY.get(info.reachability(), NetworkState.unknown)
    if (
        network is NetworkState.online
        and info.supports(Feature.CaptivePortal)
        and info.isBehindCaptivePortal()
    ):
        network = NetworkState.portal
    metered = info.isMetered() if info.supports(Feature.Metered) else None
    return NetworkReading(network, metered)


class QtNetworkReader(QObject):
    """``backend``: a backend's name (``"networkmanager"``...), or ``None`` for Qt's default."""

    def __init__(self, backend: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._backend = backend
        self._on_change: Callable[[], None] | None = None
        self._connected = False

    def start(self, on_change: Callable[[], None]) -> bool:
        loaded = (
            QNetworkInformation.loadBackendByName(self._backend)
            if self._backend is not None
            else QNetworkInformation.loadDefaultBackend()
        )
        info = QNetworkInformation.instance()
        if not loaded or info is None:
            available = ", ".join(QNetworkInformation.availableBackends()) or "none"
            wanted = self._backend or "the default"
            self.status = (
                f"no network information: cannot load {wanted} backend (available: {available});"
                " jobs are not held back for the network"
            )
            return False
        if not self._connected:
            info.reachabilityChanged.connect(self._changed)
            info.isBehindCaptivePortalChanged.connect(self._changed)
            info.isMeteredChanged.connect(self._changed)
            info.transportMediumChanged.connect(self._changed)
            self._connected = True
        self._on_change = on_change
        self.status = f"network information from Qt's {info.backendName()} backend"
        return True

    def stop(self) -> None:
        self._on_change = None

    def read(self) -> NetworkReading:
        return reading_of(QNetworkInformation.instance())

    def _changed(self, *_: object) -> None:
        if self._on_change is not None:
            self._on_change()
