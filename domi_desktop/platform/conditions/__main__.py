"""Print what the conditions' gate would see, now and at each change, as JSON lines:

    python -m domi_desktop.platform.conditions [--backend NAME] [--once]
    domi-desktop conditions [--follow]              (the same, in an installed app)

For "why is my job waiting?" at a terminal, for the desktop tests, and for the smoke test, which
asks the bundle itself which network backend it has. Runs until interrupted, or with ``--once``
prints the state once.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from PySide6.QtCore import QCoreApplication

from domi_desktop.platform.conditions import SystemConditions, condition_source_for_platform
from domi_desktop.platform.conditions.network import QtNetworkReader


def emit(event: str, source: SystemConditions) -> None:
    state = source.current()
    line = {
        "event": event,
        "t": time.monotonic(),
        "network": state.network.value,
        "metered": state.metered,
        "on_ac": state.on_ac,
        "battery_percent": state.battery_percent,
        **resources(source),
        "status": source.status,
    }
    print(json.dumps(line), flush=True)


def resources(source: SystemConditions) -> dict[str, object]:
    """The disks and network names a job could wait for (``null``: no reader on this OS)."""
    readers = source.resources
    volumes = readers.volumes.read() if readers.volumes is not None else None
    names = readers.names.read() if readers.names is not None else None
    return {
        "volumes": None if volumes is None else [[v.label, v.uuid, v.mount_point] for v in volumes],
        "network_names": None if names is None else sorted(names),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", help="Qt's network backend (default: the platform's own)")
    parser.add_argument("--once", action="store_true", help="print the state once and exit")
    args = parser.parse_args(argv)
    app = QCoreApplication(sys.argv[:1])
    signal.signal(signal.SIGINT, lambda *_: app.quit())
    source = condition_source_for_platform()
    if args.backend:
        source.network = QtNetworkReader(args.backend)
    source.start(lambda: emit("changed", source))
    emit("started", source)
    if args.once:
        source.stop()
        return 0
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
