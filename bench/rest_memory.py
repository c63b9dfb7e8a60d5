"""The tray app's RSS at rest with --schedules schedules (10,000), beside a bare PySide6 tray app.

Both run under Xvfb with the fake desktop (their tray icon registered); the app is read once its
start-up wake is logged and --settle seconds have passed (after a burst it hands freed memory back
5 s after the last run ended). Schedules are daily and weekly, as in ``bench/app_bench.py``, so
none runs while it is measured. Budget: 90 MB (issue 19).

``TRACE=N`` starts the app under ``python -X tracemalloc=25`` and writes its N largest
allocation sites at rest (by traceback) to ``rest_memory.trace`` in the current directory.

Needs a display and a session bus; without them it re-runs itself under
``dbus-run-session -- xvfb-run``. Usage: python bench/rest_memory.py [--schedules 10000]
[--settle 8] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_bench import BARE_TRAY, ROOT, Desktop, make_data, rss_mb, start_and_wait
from session import rerun_under_a_desktop

BUDGET_MB = 90.0

TRACED_APP = """
import os, runpy, signal, sys, tracemalloc

def dump(_signum, _frame):
    top = tracemalloc.take_snapshot().statistics("traceback")
    with open(os.environ["TRACE_OUT"], "w") as out:
        out.write(f"traced {sum(s.size for s in top) / 2**20:.1f} MB\\n")
        for stat in top[: int(os.environ["TRACE"])]:
            out.write(f"\\n{stat.size / 2**20:.2f} MB in {stat.count} blocks\\n")
            out.write("\\n".join(stat.traceback.format(limit=12)) + "\\n")

signal.signal(signal.SIGUSR1, dump)
sys.argv[0] = "domi-desktop"
runpy.run_module("domi_desktop", run_name="__main__")
"""


def wait_for_rest(log: Path, app: subprocess.Popen[bytes], settle: float) -> None:
    deadline = time.monotonic() + 120
    while not (log.exists() and "wake (start)" in log.read_text()):
        if app.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the app did not log its start-up wake")
        time.sleep(0.05)
    time.sleep(settle)


def trace(app: subprocess.Popen[bytes], out: Path) -> None:
    app.send_signal(10)  # SIGUSR1: the snapshot takes seconds with 25 frames a block
    deadline = time.monotonic() + 300
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(1)


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--schedules", type=int, default=10000)
    options.add_argument("--settle", type=float, default=8.0, help="seconds after start-up wake")
    options.add_argument("--repeat", type=int, default=3)
    options.add_argument("--json", action="store_true")
    args = options.parse_args()
    if (code := rerun_under_a_desktop()) is not None:
        return code

    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="domi-rest-"))
    data = work / "data"
    make_data(data, args.schedules)
    top = int(os.environ.get("TRACE", "0"))
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "QT_QPA_PLATFORM": "xcb",
           "PYTHONPATH": str(ROOT), "TRACE_OUT": str(data / "rest_memory.trace")}  # fmt: skip
    app_argv = [sys.executable, "-m", "domi_desktop"]
    if top:
        (work / "traced.py").write_text(TRACED_APP)
        app_argv = [sys.executable, "-X", "tracemalloc=25", str(work / "traced.py")]
    desktop = Desktop(work / "desktop.jsonl")
    bare_script = work / "bare_tray.py"
    bare_script.write_text(BARE_TRAY)
    app_rss: list[float] = []
    bare_rss: list[float] = []
    try:
        for _ in range(1 if top else args.repeat):
            bare, _took = start_and_wait([sys.executable, str(bare_script)], desktop, env)
            app, _took = start_and_wait(app_argv, desktop, env)
            wait_for_rest(data / "domi-desktop.log", app, args.settle)
            app_rss.append(rss_mb(app.pid))
            bare_rss.append(rss_mb(bare.pid))
            if top:
                trace(app, data / "rest_memory.trace")
            for process in (app, bare):
                process.terminate()
                process.wait(30)
    finally:
        desktop.stop()
        if top:
            shutil.copy(data / "rest_memory.trace", Path.cwd() / "rest_memory.trace")
            print(f"tracemalloc's top allocation sites: {Path.cwd() / 'rest_memory.trace'}")
        shutil.rmtree(work, ignore_errors=True)
    app_mb, bare_mb = statistics.median(app_rss), statistics.median(bare_rss)
    result = {
        "schedules": args.schedules,
        "rss_mb": round(app_mb, 1),
        "bare_rss_mb": round(bare_mb, 1),
        "rss_ratio": round(app_mb / bare_mb, 2),
        "runs_mb": [round(mb, 1) for mb in app_rss],
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"RSS at rest, {args.schedules} schedules  {app_mb:6.1f} MB (runs {result['runs_mb']})"
              f"   bare PySide6 tray {bare_mb:.1f} MB  ({app_mb / bare_mb:.2f}x)"
              f"   budget {BUDGET_MB:.0f} MB   load {' '.join(result['load'])}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
