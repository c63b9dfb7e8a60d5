"""Qt's QNetworkInformation on the "system" bus, run as a child process by the fixture tests.

    DBUS_SYSTEM_BUS_ADDRESS=... python tests/desktop/qt_netinfo_probe.py [--backend NAME]

Loads the backend (default `networkmanager`) and prints one JSON line per event on stdout,
{"event": ..., "t": time.monotonic(), ...}:
  loaded        ok, the backend's name and the values Qt read at start
  reachability  reachabilityChanged (value: Qt's enum name, e.g. "Online")
  metered       isMeteredChanged
  transport     transportMediumChanged (e.g. "Ethernet", "WiFi", "Cellular")
  portal        isBehindCaptivePortalChanged
Runs until killed; exits with 3 if the backend cannot be loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtNetwork import QNetworkInformation


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, "t": time.monotonic(), **fields}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", default="networkmanager")
    args = parser.parse_args()
    app = QCoreApplication(sys.argv)
    ok = QNetworkInformation.loadBackendByName(args.backend)
    info = QNetworkInformation.instance()
    if not ok or info is None:
        emit("loaded", ok=False, available=QNetworkInformation.availableBackends())
        return 3
    info.reachabilityChanged.connect(lambda r: emit("reachability", value=r.name))
    info.isMeteredChanged.connect(lambda m: emit("metered", value=m))
    info.transportMediumChanged.connect(lambda m: emit("transport", value=m.name))
    info.isBehindCaptivePortalChanged.connect(lambda p: emit("portal", value=p))
    emit(
        "loaded",
        ok=True,
        backend=info.backendName(),
        reachability=info.reachability().name,
        metered=info.isMetered(),
        transport=info.transportMedium().name,
        portal=info.isBehindCaptivePortal(),
    )
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
