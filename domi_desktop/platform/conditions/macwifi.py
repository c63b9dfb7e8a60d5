"""macOS Wi-Fi names through CoreWLAN (pyobjc): ``CWWiFiClient.sharedWiFiClient().interface()``
and its ``ssid()``.

From macOS 14 the SSID is ``nil`` for an app that Location Services has not allowed, even on a
network: an interface on a channel (``wlanChannel()``) without a name is on a network it may not
name, and the waiting run's reason says so rather than only "waiting for the office network".

pyobjc exists only on macOS, so CoreWLAN is imported on the first read and this module imports
anywhere; tests pass a stand-in of the client.
"""

from __future__ import annotations

import importlib
from typing import Protocol


class WiFiInterface(Protocol):
    """``CWInterface``."""

    def ssid(self) -> str | None: ...

    def wlanChannel(self) -> object | None: ...


class WiFiClient(Protocol):
    """``CWWiFiClient``."""

    def interface(self) -> WiFiInterface | None: ...


def shared_client() -> WiFiClient:
    try:
        corewlan = importlib.import_module("CoreWLAN")
    except ImportError as error:
        raise OSError(f"pyobjc's CoreWLAN is not installed: {error}") from None
    client: WiFiClient = corewlan.CWWiFiClient.sharedWiFiClient()
    return client


class CoreWlanNames:
    """The name of the Wi-Fi network the Mac is on (``WifiRead``)."""

    def __init__(self, client: WiFiClient | None = None) -> None:
        self._client = client
        self.hidden = False

    def __call__(self) -> frozenset[str]:
        if self._client is None:
            self._client = shared_client()
        self.hidden = False
        interface = self._client.interface()
        if interface is None:
            return frozenset()  # no Wi-Fi hardware
        name = interface.ssid()
        if name:
            return frozenset({str(name)})
        self.hidden = interface.wlanChannel() is not None
        return frozenset()
