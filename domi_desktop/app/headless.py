"""``domi-desktop --headless``: the scheduler on a Qt core event loop, no GUI.

Wakes and fires are logged to stderr and to ``<data dir>/domi-desktop.log``. SIGTERM and SIGINT
stop it cleanly: the timer is cancelled, running jobs are stopped (their whole process tree) and
recorded ``interrupted`` with the reason "stopped: domi-desktop quit".
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QTimer

from domi_desktop.app.qtloop import QtLoop, SignalBridge
from domi_desktop.clock import SystemClock
from domi_desktop.runtime import Runtime
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import KeyringSecretStore
from domi_desktop.store import Store

log = logging.getLogger("domi_desktop")

CLOCK_CHECK_MS = 5_000
"""How often the wall and monotonic clocks are compared (a jump or a sleep shows up here)."""


def setup_logging(data_dir: Path) -> None:
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(formatter)
    file = logging.handlers.RotatingFileHandler(
        data_dir / "domi-desktop.log", maxBytes=2_000_000, backupCount=2, encoding="utf-8"
    )
    file.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [stream, file]
    root.setLevel(logging.INFO)


def log_wake(plan: WakePlan, reason: str) -> None:
    log.info(
        "wake (%s) at %s: %d fire(s), next wake %s",
        reason,
        plan.now.isoformat(timespec="seconds"),
        len(plan.fires),
        plan.next_wake.isoformat(timespec="seconds"),
    )
    for schedule_id, problem in plan.errors:
        log.warning("schedule %s cannot be evaluated: %s", schedule_id, problem)


def log_event(event: str, payload: dict[str, Any]) -> None:
    if event == "schedule.fire":
        kind = f"skipped ({payload['skipped']})" if payload["skipped"] else "fire"
        log.info(
            "%s: schedule %s %r run %s due %s trigger %s%s%s",
            kind,
            payload["schedule_id"],
            payload["name"],
            payload["run_id"],
            payload["due"],
            payload["trigger"],
            " LATE" if payload["late"] else "",
            f", {payload['missed_count']} missed" if payload["missed_count"] else "",
        )
    elif event == "run.finished":
        log.info(
            "finished: run %s of %r %s%s in %.1fs",
            payload["run_id"],
            payload["name"],
            payload["status"],
            f" ({payload['reason']})" if payload["reason"] else "",
            payload["duration"],
        )


def run_headless(store: Store) -> int:
    setup_logging(store.data_dir)
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    clock = SystemClock()
    loop = QtLoop()
    runtime = Runtime(store, clock, loop, KeyringSecretStore(), on_wake=log_wake)
    runtime.subscribe(log_event)
    signals = SignalBridge()

    def quit_on(number: int) -> None:
        log.info("signal %d: stopping", number)
        app.quit()

    signals.received.connect(quit_on)
    watchdog = QTimer()
    watchdog.timeout.connect(runtime.driver.check_clock)
    watchdog.start(CLOCK_CHECK_MS)
    wake_sources = start_wake_sources(runtime)
    log.info("domi-desktop headless, data in %s", store.data_dir)
    loop.call_soon(runtime.start)
    try:
        app.exec()
    finally:
        watchdog.stop()
        for source in wake_sources:
            source.stop()
        runtime.stop()
        signals.close()
        log.info("stopped")
    return 0


def start_wake_sources(runtime: Runtime) -> list[Any]:
    """Resume-from-sleep and time-zone change sources of this OS, each best effort."""
    from domi_desktop.platform.resume import resume_source_for_platform
    from domi_desktop.platform.timezone import ZoneWatcher

    sources: list[Any] = []
    resume = resume_source_for_platform()
    if resume.start(lambda: runtime.driver.wake("resume"), lambda: log.info("going to sleep")):
        sources.append(resume)
    else:
        log.info("no resume signal (%s); the clock watchdog covers sleeps", resume.status)
    zones = ZoneWatcher(runtime.clock.now)
    zone_timer = QTimer()
    zone_timer.timeout.connect(lambda: zones.check() and runtime.driver.wake("tz_change"))
    zone_timer.start(CLOCK_CHECK_MS * 6)
    sources.append(zone_timer)
    return sources
