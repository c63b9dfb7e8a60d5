"""``domi-desktop --headless``: the scheduler on a Qt core event loop, no GUI.

Wakes and fires are logged to stderr and to ``<data dir>/domi-desktop.log``; the RPC socket serves
the CLI. SIGTERM and SIGINT stop it cleanly: the timer is cancelled, running jobs are stopped
(their whole process tree) and recorded ``interrupted`` with the reason "stopped: domi-desktop
quit"; ``domi-desktop quit`` does the same.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from domi_desktop.app.engine import EngineThread
from domi_desktop.app.logs import setup_logging
from domi_desktop.app.primary import AlreadyRunning
from domi_desktop.app.qtloop import SignalBridge
from domi_desktop.clock import SystemClock
from domi_desktop.store import Store

log = logging.getLogger("domi_desktop")


def run_headless(data_dir: str | Path | None) -> int:
    with Store.open(data_dir, now=SystemClock().now()) as store:
        return _serve(store)


def _serve(store: Store) -> int:
    setup_logging(store.data_dir)
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    engine = EngineThread(store, gui=False)
    try:
        host = engine.start_engine()
    except AlreadyRunning:
        log.error("domi-desktop already runs on %s; 'domi-desktop status' shows it", store.data_dir)
        return 1
    signals = SignalBridge()

    def stop(number: int) -> None:
        log.info("signal %d: stopping", number)
        app.quit()

    signals.received.connect(stop)
    host.quit_requested.connect(app.quit)
    engine.begin()
    try:
        app.exec()
    finally:
        engine.stop_engine()
        signals.close()
    return 0
