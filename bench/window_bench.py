"""Tray menu and Schedules window costs at 10 / 1,000 / 10,000 schedules (offscreen Qt).

  menu rebuild     the 20 soonest from the planner's cache, with the running marks (<= 20 ms)
  row update       a schedule changed through the service: its row re-read and repainted (<= 20 ms)
  run finished     a RunFinished event: one row's last run and result, repainted (<= 20 ms)
  wake             next fires moved: that column repainted for the visible rows (<= 20 ms)
  first load       the window's one read of every schedule (once per start)

Usage: python bench/window_bench.py [--sizes 10 1000 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no notification server needed here
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication

from domi_desktop.app.gui import connect
from domi_desktop.events import RunFinished
from domi_desktop.model import CommandAction, RunStatus, Trigger
from domi_desktop.platform.timezone import install_os_zone
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui.tray import TrayApp
from tests.support.engine import running_engine

REPEAT = 15


def median_ms(step: Callable[[], object], app: QApplication) -> float:
    times = []
    for _ in range(REPEAT):
        began = time.perf_counter()
        step()
        app.processEvents()  # the repaint is part of the cost
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def measure(size: int, app: QApplication) -> dict[str, Any]:
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp), now=now) as store:
        action = CommandAction(argv=("true",))
        for number in range(size):
            store.create_schedule(
                f"job {number}", f"{number % 60} {number % 24} * * *", "UTC", action, now=now
            )
        with running_engine(store, secrets=MemorySecretStore()) as engine:
            return _measure(engine, store, app, size, now)


def _measure(engine: Any, store: Store, app: QApplication, size: int, now: datetime) -> Any:
    host = engine.handle
    tray = TrayApp(app, host)
    connect(tray, host)
    window = tray.main_window
    began = time.perf_counter()
    window.refresh()
    first_load = (time.perf_counter() - began) * 1000
    window.show()
    app.processEvents()
    run_id = store.record_manual_run(1, now, Trigger.manual)
    finished = RunFinished(run_id=run_id, schedule_id=1, name="job 0",
                           status=RunStatus.succeeded, reason=None, exit_code=0,
                           duration=timedelta(seconds=1))  # fmt: skip
    names = iter(range(10**9))
    result = {
        "schedules": size,
        "menu_rebuild_ms": median_ms(tray.rebuild_menu, app),
        "row_update_ms": median_ms(
            lambda: host.service.update_schedule({"id": 1, "name": f"renamed {next(names)}"}),
            app,
        ),
        "run_finished_ms": median_ms(lambda: tray.on_event(finished), app),
        "wake_ms": median_ms(window.engine_changed, app),
        "first_load_ms": first_load,
    }
    tray.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 10000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    install_os_zone()
    app = QApplication([])
    results = [measure(size, app) for size in args.sizes]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'schedules':>10} {'menu':>9} {'row':>9} {'finished':>9} {'wake':>9} {'1st load':>9}")
    for r in results:
        print(
            f"{r['schedules']:>10} {r['menu_rebuild_ms']:>7.2f}ms {r['row_update_ms']:>7.2f}ms "
            f"{r['run_finished_ms']:>7.2f}ms {r['wake_ms']:>7.2f}ms {r['first_load_ms']:>7.0f}ms"
        )


if __name__ == "__main__":
    main()
