"""The tray app's budgets, side by side with a bare PySide6 tray app measured in the same run.

  start to tray registered   spawn -> RegisterStatusNotifierItem seen by a fake desktop (<= 1.0 s)
  idle CPU and wakes         CPU ticks and scheduler wakes over --idle seconds (<= 1 wake a minute)
  RSS                        with --schedules schedules (1,000) after the idle time (<= 90 MB)
  editor preview refresh     one keystroke's validation + next 10 fires (<= 10 ms)
  status under simulations   app.status answered while 4 clients' batches of the heaviest
                             simulations run (tens of ms; it waited 7.6 s before the worker pool)

Needs a display and a session bus; without them it re-runs itself under
``dbus-run-session -- xvfb-run``. Usage: python bench/app_bench.py [--idle 60] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bare import BARE_TRAY
from session import rerun_under_a_desktop

ROOT = Path(__file__).resolve().parents[1]
FAKE_DESKTOP = ROOT / "tests" / "desktop" / "fake_desktop.py"
HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Desktop:
    def __init__(self, log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_DESKTOP), "--log", str(log)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "READY"

    def registrations(self) -> int:
        if not self.log.exists():
            return 0
        return sum(
            '"RegisterStatusNotifierItem"' in line for line in self.log.read_text().splitlines()
        )

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        if self.process.stdout:
            self.process.stdout.close()


def start_and_wait(
    argv: list[str], desktop: Desktop, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], float]:
    before = desktop.registrations()
    began = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while desktop.registrations() == before:
        if process.poll() is not None:
            raise RuntimeError(f"{argv} exited with {process.returncode}")
        time.sleep(0.002)
    return process, time.perf_counter() - began


def make_data(path: Path, count: int) -> None:
    from domi_desktop.clock import SystemClock
    from domi_desktop.model import CommandAction
    from domi_desktop.store import Store

    exprs = ["0 9 * * *", "30 2 * * *", "0 9 * * 1-5", "0 0 1 * *", "15 14 * * sun"]
    with Store.open(path, now=SystemClock().now()) as store:
        for i in range(count):
            store.create_schedule(f"job {i}", exprs[i % len(exprs)], "Europe/Riga",
                                  CommandAction(argv=("true",)), now=SystemClock().now())  # fmt: skip
    with closing(sqlite3.connect(path / "domi.sqlite3")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def editor_refresh_ms() -> float:
    code = """
import time, sys
from datetime import datetime, UTC
from pathlib import Path
import tempfile
from PySide6.QtWidgets import QApplication
app = QApplication([])
from domi_desktop.clock import SystemClock
from domi_desktop.frontdoor.service import Service
from domi_desktop.store import Store
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.platform.timezone import install_os_zone
install_os_zone()  # as the app does at start-up
with Store.open(Path(tempfile.mkdtemp()), now=datetime.now(UTC)) as store:
    dialog = EditorDialog(Service(store, SystemClock()), secret_names=lambda: [])
    dialog.show()
    times = []
    # A keystroke: the text changes, validation, description, next 10 fires, the sleep panel.
    for text in ["0 9 * * 1-5", "30 2 * * *", "*/5 * * * *", "0 0 29 2 *", "0 0 13 * 5"] * 20:
        began = time.perf_counter()
        dialog.cron.set_text(text)
        app.processEvents()
        times.append(time.perf_counter() - began)
    times.sort()
    print(times[len(times) // 2] * 1000)
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=ROOT
    )
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return float("nan")
    return float(done.stdout.strip().splitlines()[-1])


def status_under_simulations_ms(data: Path) -> float:
    """The longest of 5 app.status answers while 4 clients each wait for a batch of two of the
    heaviest simulations (1,000 wakes over ten years of ``* * * * *``)."""
    import socket
    import threading
    from datetime import UTC, datetime, timedelta

    from domi_desktop.frontdoor.rpc.instance import socket_name
    from domi_desktop.scheduler.simulate import MAX_WAKES

    path = socket_name(data)
    last = datetime(2020, 1, 1, tzinfo=UTC)
    step = timedelta(days=3652) / MAX_WAKES
    wakes = [(last + step * (i + 1)).isoformat() for i in range(MAX_WAKES)]
    batch = json.dumps([
        {"jsonrpc": "2.0", "id": i, "method": "schedule.simulate",
         "params": {"expr": "* * * * *", "tz": "Europe/Berlin", "last_due": last.isoformat(),
                    "wakes": wakes}}
        for i in range(2)
    ]).encode() + b"\n"  # fmt: skip
    sent = threading.Semaphore(0)

    def ask() -> None:
        with socket.socket(socket.AF_UNIX) as heavy:
            heavy.settimeout(300)
            heavy.connect(path)
            heavy.sendall(batch)
            sent.release()
            received = bytearray()  # read as it comes: the app drops a client that lags far
            while not received.endswith(b"\n") and (chunk := heavy.recv(1 << 20)):
                received.extend(chunk)

    def status() -> float:
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(300)
            client.connect(path)
            began = time.perf_counter()
            client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"app.status"}\n')
            reply = b""
            while not reply.endswith(b"\n") and (chunk := client.recv(65536)):
                reply += chunk
            return time.perf_counter() - began

    clients = [threading.Thread(target=ask) for _ in range(4)]
    for client in clients:
        client.start()
    for _ in clients:
        sent.acquire()
    latencies = [status() for _ in range(5)]
    for client in clients:
        client.join()
    return max(latencies) * 1000


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--idle", type=float, default=60.0, help="seconds of idle to measure")
    options.add_argument("--schedules", type=int, default=1000)
    options.add_argument("--json", action="store_true")
    args = options.parse_args()
    if (code := rerun_under_a_desktop()) is not None:
        return code

    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="domi-bench-"))
    data = work / "data"
    make_data(data, args.schedules)
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "QT_QPA_PLATFORM": "xcb"}
    desktop = Desktop(work / "desktop.jsonl")
    bare_script = work / "bare_tray.py"
    bare_script.write_text(BARE_TRAY)
    try:
        bare_starts, app_starts = [], []
        for _ in range(5):
            bare, took = start_and_wait([sys.executable, str(bare_script)], desktop, env)
            bare_starts.append(took)
            bare_rss = rss_mb(bare.pid)
            bare.terminate()
            bare.wait(10)
            app, took = start_and_wait([sys.executable, "-m", "domi_desktop"], desktop, env)
            app_starts.append(took)
            if len(app_starts) < 5:
                app.terminate()
                app.wait(20)
        time.sleep(2)  # let the start-up catch-up settle
        log = data / "domi-desktop.log"
        wakes_before = log.read_text().count("wake (")
        ticks_before = cpu_ticks(app.pid)
        bare, _took = start_and_wait([sys.executable, str(bare_script)], desktop, env)
        bare_ticks_before = cpu_ticks(bare.pid)
        time.sleep(args.idle)
        idle_ticks = cpu_ticks(app.pid) - ticks_before
        bare_idle_ticks = cpu_ticks(bare.pid) - bare_ticks_before
        wakes = log.read_text().count("wake (") - wakes_before
        app_rss = rss_mb(app.pid)  # at rest: after the idle time
        status_ms = status_under_simulations_ms(data)
        for process in (app, bare):
            process.terminate()
            process.wait(20)
    finally:
        desktop.stop()
        shutil.rmtree(work, ignore_errors=True)
    refresh = editor_refresh_ms()
    start, bare_start = min(app_starts), min(bare_starts)
    result: dict[str, Any] = {
        "start_to_tray_s": round(start, 3),
        "bare_tray_start_s": round(bare_start, 3),
        "start_ratio": round(start / bare_start, 2),
        "idle_seconds": args.idle,
        "idle_cpu_seconds": idle_ticks / HZ,
        "bare_idle_cpu_seconds": bare_idle_ticks / HZ,
        "scheduler_wakes": wakes,
        "rss_mb": round(app_rss, 1),
        "bare_rss_mb": round(bare_rss, 1),
        "rss_ratio": round(app_rss / bare_rss, 2),
        "schedules": args.schedules,
        "editor_refresh_ms": round(refresh, 2),
        "status_under_simulations_ms": round(status_ms, 1),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"start to tray registered  {start:6.3f} s   bare PySide6 tray {bare_start:.3f} s  "
          f"({start / bare_start:.1f}x)   budget 1.0 s")  # fmt: skip
    print(f"idle {args.idle:.0f} s               {idle_ticks / HZ:6.2f} s CPU, {wakes} scheduler wake(s)"
          f"   bare {bare_idle_ticks / HZ:.2f} s CPU   budget ~0, <= 1 wake/min")  # fmt: skip
    print(f"RSS, {args.schedules} schedules     {app_rss:6.1f} MB   bare {bare_rss:.1f} MB  "
          f"({app_rss / bare_rss:.1f}x)   budget 90 MB")  # fmt: skip
    print(f"editor preview refresh    {refresh:6.2f} ms   budget 10 ms")
    print(f"status under simulations  {status_ms:6.1f} ms   (7.6 s before the worker pool)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
