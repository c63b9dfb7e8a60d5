"""The wake after a long sleep, measured on the real tray app beside a bare PySide6 tray.

At the design point (docs/scope.md: 1,000 schedules of the real-world mix, ``--sizes``) and at
the stress point (10,000 schedules every minute, ``--stress-sizes``), the app runs under Xvfb
with the fake desktop (notifications) and a fake logind on a private system bus, a 10 ms
heartbeat QTimer in its GUI thread, and libfaketime: the clock jumps 3 days and
PrepareForSleep(false) is sent. A bare PySide6 tray with the same heartbeat runs beside it
through the same wake. Reported per run:

  gap_ms        the longest the GUI loop stood still from the wake until every job ended (<= 17
                at the design point: one frame at 60 Hz)
  bare_gap_ms   the same of the bare tray, in the same seconds: what the machine allowed
  bare_rss_mb, rss_over_bare_mb
                the bare tray's RSS, and the app's at rest above it (<= 25 at the design point)
  gc_worst_ms   the longest collection of Python's cyclic garbage collector meanwhile (any thread:
                it holds the GIL, so the GUI loop stands still through it)
  first_job_s   wake -> the first job's process ran
  notify_s      wake -> the wake's notification reached the desktop (<= 1 s at 1,000)
  rows, write_rows_per_s, raw_rows_per_s, write_ratio
                the catch-up's rows per second as the app wrote them (the worker's whole write,
                skipped instants computed) against raw ``sqlite3`` writing the same rows into a
                copy of the same file in this run (>= 0.5)
  rss_idle_mb   the app's RSS before the sleep, its start-up catch-up done (<= 90 at 10,000)
  rss_mb        the app's RSS after the catch-up
  jobs_finished jobs ended a few seconds after the wake (the gap is measured over that time)
  status_ms     ``app.status`` over the socket, median of 20 (<= 20 at 10,000)
  status_wake_worst_ms, status_wake_p99_ms
                ``app.status`` from a client process calling every 25 ms from just before the
                jump until every job ended: the worst and the 99th percentile (<= 150 worst)
Then ``domi-desktop status`` with no app against ``python -c pass`` (<= 2x), best of 7.

Then the same with the History window open (``--history-sizes``, default 1,000).

With ``--slow-disk-ms D`` every size runs twice in this one run, on the normal disk and on a disk
whose every ``fsync``/``fdatasync`` of the app (and only the app: the raw baseline keeps the real
disk) takes D ms more (``tests/support/slowdisk``, a preloaded shim built with the C compiler), and
``slow_disk`` in the summary tells them apart (issue 25: the notification and the GUI loop must
not wait for the disk).

With ``GAPS=file`` the app writes every thread's stack while its GUI loop stands still, with
``GCLOG=file`` each garbage collection over 10 ms: what held a long gap.

Usage: python bench/wake_bench.py [--sizes 20,100,1000,10000] [--history-sizes 1000]
       [--repeat N] [--slow-disk-ms D] [--json]
Needs dbus-daemon, Xvfb and libfaketime (Debian: dbus, xvfb, libfaketime); without a display
and a session bus it re-runs itself under ``dbus-run-session -- xvfb-run``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jeepney.io.blocking import open_dbus_connection

from bench.bare import BARE_TRAY
from bench.session import rerun_under_a_desktop
from bench.status_poller import StatusPoller, percentile
from tests.desktop.harness import (
    FAKE_DESKTOP,
    FAKE_LOGIND,
    SYSTEM_BUS_CONFIG,
    FakeDesktop,
    FakeLogind,
    read_first_line,
    start_fake,
)
from tests.support import slowdisk
from tests.support.faketime import fake_clock

LAUNCHER = """
import json, os, sys, threading, time, runpy
from PySide6.QtCore import QTimer, Qt
from PySide6.QtWidgets import QApplication
out = sys.argv.pop(1)
state = {"last": None, "max": 0.0, "ticks": 0, "gc_max": 0.0, "gc_at": None}
gc_log = open(os.environ["GCLOG"], "w") if os.environ.get("GCLOG") else None
def gc_timed(phase, info):
    # The longest collection of the cyclic garbage collector, in any thread: it holds the GIL.
    if phase == "start":
        state["gc_at"] = time.perf_counter()
    elif state["gc_at"] is not None:
        took = time.perf_counter() - state["gc_at"]
        state["gc_max"] = max(state["gc_max"], took)
        if gc_log is not None and took > 0.01:
            # GCLOG=file: each collection over 10 ms, with what was set aside at its end.
            gc_log.write(f"{time.time():.3f} gen {info['generation']} {1000 * took:.0f} ms "
                         f"collected {info['collected']} frozen {gc.get_freeze_count()} "
                         f"{threading.current_thread().name}\\n")
            gc_log.flush()
import gc
gc.callbacks.append(gc_timed)
def tick():
    now = time.perf_counter()
    if state["last"] is not None:
        gap = now - state["last"]
        if gap < 3600:  # the clock jump itself moves the monotonic clock too (libfaketime)
            state["max"] = max(state["max"], gap)
    state["last"] = now
    state["ticks"] += 1
def report():
    reset = out + ".reset"
    while True:
        time.sleep(0.1)
        if os.path.exists(reset):
            os.unlink(reset)
            state["max"] = state["gc_max"] = 0.0
        with open(out + ".new", "w") as f:
            json.dump({"max": state["max"], "ticks": state["ticks"], "gc_max": state["gc_max"]}, f)
        os.replace(out + ".new", out)
threading.Thread(target=report, daemon=True).start()
def watch_gaps(path):
    # GAPS=file: every thread's stack, caught while the GUI thread has not ticked for 30 ms
    # (at the moment this thread gets the GIL): what held the loop.
    import traceback
    main_id = threading.main_thread().ident
    seen, samples = None, 0
    with open(path, "w") as dump:
        while True:
            time.sleep(0.01)
            last = state["last"]
            if last is None or time.perf_counter() - last < 0.03:
                continue
            samples = samples + 1 if last == seen else 0
            seen = last
            if samples > 10:
                continue
            frames = sys._current_frames()
            dump.write(f"=== gap from {last:.3f}, {1000 * (time.perf_counter() - last):.0f} ms so far\\n")
            for ident, frame in frames.items():
                name = "MAIN" if ident == main_id else str(ident)
                dump.write(f"--- {name}\\n" + "".join(traceback.format_stack(frame)[-14:]))
            dump.flush()
if os.environ.get("GAPS"):
    threading.Thread(target=watch_gaps, args=(os.environ["GAPS"],), daemon=True).start()
original = QApplication.exec
def open_history():
    import gc
    from domi_desktop.ui.tray import TrayApp
    tray = next(o for o in gc.get_objects() if isinstance(o, TrayApp))
    tray.open_history(None)
def exec_with_heartbeat(*args):
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)
    timer.start(10)
    if os.environ.get("BENCH_HISTORY"):
        QTimer.singleShot(300, open_history)
    return original()
QApplication.exec = exec_with_heartbeat
if os.environ.get("BENCH_BARE"):
    runpy.run_path(os.environ["BENCH_BARE"], run_name="__main__")  # the bare tray, same heartbeat
else:
    sys.argv[0] = "domi-desktop"
    runpy.run_module("domi_desktop", run_name="__main__")
"""

STRESS = ("* * * * *",)
"""The stress point: every schedule every minute (500-5,000 job starts a minute on 2 cores)."""
REAL_MIX = (
    (41, ("{m} {h} * * *",)),
    (20, ("{m} {h} * * {dow}", "{m} {h} {dom} * *")),
    (17, ("{m} * * * *",)),
    (17, ("*/15 * * * *", "*/10 * * * *", "{m},{m2} * * * *", "*/20 * * * *")),
    (6, ("* * * * *",)),
)
"""The design point (docs/scope.md): the shares of 202 job lines in 77 public crontab files, in
percent: daily; weekly or monthly; hourly; several times an hour; every minute."""


def expressions(count: int, mix: str) -> list[str]:
    """``count`` cron expressions of the ``mix`` ("real" or "stress"), the same for every run."""
    import random

    if mix == "stress":
        return [STRESS[i % len(STRESS)] for i in range(count)]
    rng = random.Random(count)
    shapes = [shape for weight, group in REAL_MIX for shape in group for _ in range(weight)]
    found = []
    for _ in range(count):
        m = rng.randrange(60)
        found.append(rng.choice(shapes).format(
            m=m, m2=(m + 30) % 60, h=rng.randrange(24), dow=rng.randrange(7),
            dom=rng.randrange(1, 29),
        ))  # fmt: skip
    return found


WRITE = re.compile(r"claimed (\d+) fire\(s\): wrote (\d+) rows in ([0-9.]+) s")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_data(data: Path, count: int, marker: Path, mix: str) -> None:
    from domi_desktop.clock import SystemClock
    from domi_desktop.model import CommandAction
    from domi_desktop.store import Store

    now = SystemClock().now()
    with Store.open(data, now=now) as store:
        for index, expr in enumerate(expressions(count, mix)):
            store.create_schedule(
                f"job {index}", expr, "UTC", CommandAction(argv=("touch", str(marker))), now=now,
            )  # fmt: skip
    with contextlib.closing(sqlite3.connect(data / "domi.sqlite3")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def raw_rows_per_s(data: Path, scratch: Path) -> float:
    """The same rows (every run the catch-up wrote), inserted by raw sqlite3 into a copy of the
    file as it was before (same schema, indexes, WAL, synchronous=FULL) in one transaction."""
    with contextlib.closing(sqlite3.connect(data / "domi.sqlite3")) as db:
        rows = db.execute(
            'SELECT schedule_id, status, "trigger", due, fired_at, reason, late, missed_count, '
            "attempt, owner_pid, owner_token, owner_started FROM runs ORDER BY id"
        ).fetchall()
    copy = scratch / "raw.sqlite3"
    with (
        contextlib.closing(sqlite3.connect(data / "domi.sqlite3")) as source,
        contextlib.closing(sqlite3.connect(copy)) as target,
    ):
        source.backup(target)
        target.execute("DELETE FROM runs")
        target.commit()
    with contextlib.closing(sqlite3.connect(copy, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        began = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            'INSERT INTO runs (schedule_id, status, "trigger", due, fired_at, reason, late, '
            "missed_count, attempt, owner_pid, owner_token, owner_started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.execute("COMMIT")
        took = time.perf_counter() - began
    copy.unlink()
    return len(rows) / took


def wait(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.002)
    raise RuntimeError(f"timed out waiting for {what}")


def status_ms(data: Path) -> float:
    from domi_desktop.frontdoor.rpc.client import connect_to_app

    client = connect_to_app(data)
    assert client is not None
    times = []
    for _ in range(20):
        began = time.perf_counter()
        client.call("app.status", {})
        times.append(time.perf_counter() - began)
    client.close()
    return statistics.median(times) * 1000


def one_size(
    count: int,
    work: Path,
    bus: str,
    desktop: FakeDesktop,
    logind: FakeLogind,
    history: bool,
    slow_disk: float = 0.0,
    mix: str = "real",
) -> dict[str, Any]:
    name = f"{count}{'-history' if history else ''}-{time.monotonic_ns()}"
    data = work / f"data-{name}"
    marker = work / f"ran-{name}"
    make_data(data, count, marker, mix)
    (work / f"clock-{name}").mkdir()
    clock = fake_clock(work / f"clock-{name}")
    beat = work / f"beat-{name}.json"
    launcher = work / "launcher.py"
    launcher.write_text(LAUNCHER)
    env = {
        **os.environ, **clock.env, "DOMI_DATA_DIR": str(data), "QT_QPA_PLATFORM": "xcb",
        "DBUS_SYSTEM_BUS_ADDRESS": bus, "PYTHONPATH": str(ROOT),
        **({"BENCH_HISTORY": "1"} if history else {}),
    }  # fmt: skip
    if slow_disk:
        library = slowdisk.build(work / "slowdisk")
        assert library is not None, "--slow-disk-ms needs a C compiler (cc)"
        env.update(slowdisk.environment(library, slow_disk, env.get("LD_PRELOAD", "")))
    log = data / "domi-desktop.log"
    app = subprocess.Popen(
        [sys.executable, str(launcher), str(beat)], env=env, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    # A bare PySide6 tray with the same heartbeat, beside the app through the same wake: what
    # the machine itself allows a GUI loop, and what a tray costs in memory.
    bare_script, bare_beat = work / "bare_tray.py", work / f"bare-beat-{name}.json"
    bare_script.write_text(BARE_TRAY)
    bare = subprocess.Popen(
        [sys.executable, str(launcher), str(bare_beat)],
        env={**{k: v for k, v in env.items() if k not in ("GAPS", "GCLOG")},
             "BENCH_BARE": str(bare_script)}, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    profiler = poller = None
    polled: list[float] = []
    try:
        wait(lambda: log.exists() and "listening for resume" in log.read_text(), 60, "the app")
        wait(lambda: "wake (start)" in log.read_text(), 60, "the start-up wake")
        # The wake is measured alone: no minute boundary (hundreds of `* * * * *` jobs of the
        # app's normal running) in the 1.3 s before the jump or the few seconds after it.
        time.sleep(1.0)
        while not 8 <= time.time() % 60 <= 20:
            time.sleep(0.2)
        notified = len(desktop.calls("Notify"))
        rss_idle = rss_mb(app.pid)
        wait(bare_beat.exists, 60, "the bare tray")
        bare_rss = rss_mb(bare.pid)
        (beat.parent / (beat.name + ".reset")).touch()
        (bare_beat.parent / (bare_beat.name + ".reset")).touch()
        time.sleep(0.3)
        logind.prepare_for_sleep(True)
        if os.environ.get("PROFILE"):
            profiler = subprocess.Popen(
                [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(app.pid),
                 "--threads", *(["--native"] if os.environ.get("NATIVE") else []),
                 "--rate", "500", "--format", "raw", "--output",
                 f"{os.environ['PROFILE']}-{count}.txt"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1.0)
        marker.unlink(missing_ok=True)  # a job of the last minute before the sleep
        before_wake = len(log.read_text())
        poller = StatusPoller(data, work)
        clock.jump(timedelta(days=3))
        began = time.perf_counter()
        logind.prepare_for_sleep(False)
        first_job = notify = None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and (first_job is None or notify is None):
            if first_job is None and marker.exists():
                first_job = time.perf_counter() - began
            if notify is None and len(desktop.calls("Notify")) > notified:
                notify = time.perf_counter() - began
            time.sleep(0.002)
        # The wake's own claims: the first written after the jump (a minute boundary later
        # writes more).
        text = wait(
            lambda: (t := log.read_text()[before_wake:]) and WRITE.search(t) and t, 600, "claims"
        )
        fires, rows, seconds = WRITE.findall(text)[0]
        # Not until every job ended (at 10,000 schedules minute boundaries keep adding more):
        # the launches of the wake are over a few seconds after it.
        settle = max(3.0, int(fires) / 300)
        time.sleep(settle)
        polled, poller = poller.stop(), None
        finished = log.read_text().count("finished: run")
        beats = json.loads(beat.read_text())
        gap, gc_pause = beats["max"], beats["gc_max"]
        bare_gap = json.loads(bare_beat.read_text())["max"]
        rss = rss_mb(app.pid)
        status = status_ms(data)
    finally:
        bare.terminate()
        bare.wait(30)
        if poller is not None:
            poller.stop()
        if profiler is not None:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(60)
        app.terminate()
        try:
            app.wait(60)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        # Jobs still running when the app quits are stopped by it; what is left of the group goes
        # too, so the next size starts on an idle machine.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(app.pid, signal.SIGKILL)
    raw = raw_rows_per_s(data, work)
    write = int(rows) / float(seconds)
    return {
        "schedules": count, "mix": mix, "history_open": history, "slow_disk_ms": slow_disk,
        "gap_ms": round(gap * 1000, 1), "bare_gap_ms": round(bare_gap * 1000, 1),
        "bare_rss_mb": round(bare_rss, 1), "rss_over_bare_mb": round(rss_idle - bare_rss, 1),
        "gc_worst_ms": round(gc_pause * 1000, 1),
        "first_job_s": None if first_job is None else round(first_job, 3),
        "notify_s": None if notify is None else round(notify, 3),
        "fires": int(fires), "rows": int(rows), "write_rows_per_s": round(write),
        "raw_rows_per_s": round(raw), "write_ratio": round(write / raw, 2),
        "rss_idle_mb": round(rss_idle, 1), "rss_mb": round(rss, 1),
        "status_ms": round(status, 2), "jobs_finished": finished, "status_calls": len(polled),
        "status_wake_worst_ms": round(max(polled, default=math.nan) * 1000, 1),
        "status_wake_p99_ms": round(percentile(polled, 0.99) * 1000, 1),
    }  # fmt: skip


def cli_status(data: Path) -> dict[str, float]:
    """Commands with no app running against ``python -c pass`` (same interpreter): the best of 8
    runs each, in seconds, and the ratio (issue 11: ``status`` at most 2x)."""
    # As installed: with the bytecode cache (a test environment may turn writing it off).
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def best(argv: list[str]) -> float:
        times = []
        for _ in range(8):
            began = time.perf_counter()
            subprocess.run(argv, check=False, capture_output=True, cwd=ROOT, env=env)
            times.append(time.perf_counter() - began)
        return min(times)

    commands = {
        "status": ["status"],
        "version": ["--version"],
        "preview": ["preview", "*/5 * * * *"],
        "schedule_list": ["schedule", "list"],
    }
    bare = best([sys.executable, "-c", "pass"])
    figures = {"python_pass_s": round(bare, 3)}
    for label, words in commands.items():
        took = best([sys.executable, "-m", "domi_desktop", *words])
        figures[f"{label}_s"] = round(took, 3)
        figures[f"{label}_ratio"] = round(took / bare, 2)
    return figures


def summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per size (and History open or not): the median and the worst of the repeated runs."""
    groups: dict[tuple[int, str, bool, float], list[dict[str, Any]]] = {}
    for result in results:
        key = (result["schedules"], result["mix"], result["history_open"], result["slow_disk_ms"])
        groups.setdefault(key, []).append(result)
    return [
        {
            "schedules": size, "mix": mix, "history_open": history, "slow_disk_ms": slow,
            "runs": len(runs),
            "gap_ms_median": statistics.median(r["gap_ms"] for r in runs),
            "gap_ms_worst": max(r["gap_ms"] for r in runs),
            "bare_gap_ms_worst": max(r["bare_gap_ms"] for r in runs),
            "rss_over_bare_mb_median": statistics.median(r["rss_over_bare_mb"] for r in runs),
            "gc_worst_ms": max(r["gc_worst_ms"] for r in runs),
            "notify_s_median": statistics.median(r["notify_s"] or 0 for r in runs),
            "write_ratio_median": statistics.median(r["write_ratio"] for r in runs),
            "status_ms_median": statistics.median(r["status_ms"] for r in runs),
            "status_wake_worst_ms": max(r["status_wake_worst_ms"] for r in runs),
            "status_wake_p99_ms_median": statistics.median(r["status_wake_p99_ms"] for r in runs),
        }
        for (size, mix, history, slow), runs in groups.items()
    ]  # fmt: skip


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument(
        "--sizes", default="1000", help="schedules of the real-world mix (the design point)"
    )
    options.add_argument(
        "--stress-sizes", default="10000", help="schedules all every minute (the stress point)"
    )
    options.add_argument("--history-sizes", default="1000", help="the same with History open")
    options.add_argument("--repeat", type=int, default=1, help="runs of each size (median, worst)")
    options.add_argument(
        "--slow-disk-ms", type=float, default=0.0,
        help="also run each size with every sync of the app this much slower",
    )  # fmt: skip
    options.add_argument("--json", action="store_true")
    args = options.parse_args()
    if (code := rerun_under_a_desktop()) is not None:
        return code
    work = Path(tempfile.mkdtemp(prefix="domi-wake-"))
    config = work / "system-bus.conf"
    config.write_text(SYSTEM_BUS_CONFIG)
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert daemon.stdout is not None
    bus = read_first_line(daemon.stdout, 10)
    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": bus}
    desktop = FakeDesktop(
        start_fake(FAKE_DESKTOP, ["--notify-delay", "0"], work / "desktop.jsonl", env),
        work / "desktop.jsonl", open_dbus_connection("SESSION"), 0.0,
    )  # fmt: skip
    logind = FakeLogind(
        start_fake(FAKE_LOGIND, ["--address", bus], work / "logind.jsonl", env),
        work / "logind.jsonl", open_dbus_connection(bus),
    )  # fmt: skip
    results: list[dict[str, Any]] = []
    try:
        runs = [(int(s), False, "real") for s in args.sizes.split(",") if s]
        runs += [(int(s), False, "stress") for s in args.stress_sizes.split(",") if s]
        runs += [(int(s), True, "real") for s in args.history_sizes.split(",") if s]
        disks = [0.0, args.slow_disk_ms] if args.slow_disk_ms else [0.0]
        for size, history, mix in runs:
            for _, slow in ((r, d) for r in range(args.repeat) for d in disks):
                results.append(one_size(size, work, bus, desktop, logind, history, slow, mix))
                if not args.json:
                    print(results[-1], flush=True)
        cli = cli_status(next(work.glob(f"data-{results[0]['schedules']}-*")))
    finally:
        desktop.child.stop()
        logind.child.stop()
        daemon.terminate()
        daemon.wait(10)
        if not os.environ.get("KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    report = {"wakes": results, "summary": summary(results), "cli_status_no_app": cli}
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
