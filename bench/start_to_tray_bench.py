"""Start to tray icon from the installed Linux bundle, beside a bare PySide6 tray app built the
same way (PyInstaller onedir), in one run, under Xvfb with a real tray: Debian's xfce4-panel, its
systray plugin being the StatusNotifierWatcher.

  start to tray   spawn -> the app's item in the panel's RegisteredStatusNotifierItems (<= 2x bare)

The app is installed from the tarball with its own install.sh into a throw-away HOME (the tarball
``make package`` or ``make test``'s packaging stage made: dist/ or .package/dist/, or --tarball).
The two programs take turns, --runs times each; the medians and their ratio are printed.
Needs a display and a session bus; without them it re-runs itself under
``dbus-run-session -- xvfb-run``. Usage: python bench/start_to_tray_bench.py [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from session import rerun_under_a_desktop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "desktop"))
import realdesktop
from jeepney.io.blocking import open_dbus_connection

BARE_TRAY = """
import sys
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QMenu
from PySide6.QtGui import QIcon, QPixmap, QColor
app = QApplication(sys.argv)
pixmap = QPixmap(22, 22); pixmap.fill(QColor("#3b82f6"))
tray = QSystemTrayIcon(QIcon(pixmap)); menu = QMenu(); menu.addAction("Quit", app.quit)
tray.setContextMenu(menu); tray.show()
app.exec()
"""
REGISTER_TIMEOUT = 120.0
POLL = 0.005


def find_tarball(given: str | None) -> Path:
    if given:
        return Path(given)
    found = sorted(ROOT.glob(".package/dist/*-linux-*.tar.gz")) + sorted(
        ROOT.glob("dist/*-linux-*.tar.gz")
    )
    if not found:
        raise SystemExit("no Linux tarball: make package (or give --tarball)")
    return found[0]


def install(tarball: Path, work: Path, env: dict[str, str]) -> Path:
    """The app as a person installs it: the tarball unpacked, its install.sh run."""
    with tarfile.open(tarball) as archive:
        archive.extractall(work / "unpacked", filter="tar")
    (script,) = (work / "unpacked").glob("*/install.sh")
    subprocess.run([str(script)], env=env, check=True, stdout=subprocess.DEVNULL)
    return Path(env["HOME"]) / ".local" / "opt" / "domi-desktop" / "domi-desktop"


def build_bare(work: Path) -> Path:
    script = work / "bare_tray.py"
    script.write_text(BARE_TRAY)
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--onedir", "--log-level", "WARN",
         "--distpath", str(work / "bare-dist"), "--workpath", str(work / "bare-build"),
         "--specpath", str(work), str(script)],
        check=True,
    )  # fmt: skip
    return work / "bare-dist" / "bare_tray" / "bare_tray"


def start_to_tray(argv: list[str], panel: realdesktop.RealPanel, env: dict[str, str]) -> float:
    """Seconds from spawn to the panel listing a new item; the program is stopped after."""
    before = set(panel.registered_items())
    began = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not set(panel.registered_items()) - before:
            if process.poll() is not None:
                raise SystemExit(f"{argv[0]} exited with {process.returncode} before its tray")
            if time.perf_counter() - began > REGISTER_TIMEOUT:
                raise SystemExit(f"{argv[0]}: no tray item within {REGISTER_TIMEOUT:g} s")
            time.sleep(POLL)
        return time.perf_counter() - began
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        realdesktop.wait_until(
            "the item gone from the panel",
            lambda: set(panel.registered_items()) <= before or None,
            30,
        )


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--runs", type=int, default=7)
    options.add_argument("--tarball", help="the Linux tarball (default: .package/dist or dist)")
    options.add_argument("--json", action="store_true")
    args = options.parse_args()
    if (code := rerun_under_a_desktop()) is not None:
        return code
    realdesktop.require_programs(**{"xfce4-panel": "xfce4-panel"})
    work = Path(tempfile.mkdtemp(prefix="domi-tray-bench-"))
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "XDG_CONFIG_HOME": str(work / "home" / ".config"),
        "XDG_DATA_HOME": str(work / "home" / ".local" / "share"),
        "DOMI_DATA_DIR": str(work / "data"),
        "NO_AT_BRIDGE": "1",
        "QT_QPA_PLATFORM": "xcb",
    }
    Path(env["HOME"]).mkdir()
    tarball = find_tarball(args.tarball)
    app = install(tarball, work, env)
    bare = build_bare(work)
    realdesktop.preseed_panel(Path(env["XDG_CONFIG_HOME"]))
    conn = open_dbus_connection("SESSION")
    xfconfd = realdesktop.start_xfconfd(env, work, conn)
    panel = realdesktop.start_panel(env, work, conn)
    try:
        app_runs, bare_runs = [], []
        for _ in range(args.runs):
            bare_runs.append(start_to_tray([str(bare)], panel, env))
            app_runs.append(start_to_tray([str(app)], panel, env))
    finally:
        panel.process.stop()
        xfconfd.stop()
        conn.close()
        shutil.rmtree(work, ignore_errors=True)
    app_s, bare_s = statistics.median(app_runs), statistics.median(bare_runs)
    result: dict[str, Any] = {
        "tarball": tarball.name,
        "runs": args.runs,
        "start_to_tray_s": round(app_s, 3),
        "bare_tray_s": round(bare_s, 3),
        "ratio": round(app_s / bare_s, 2),
        "app_runs_s": [round(t, 3) for t in app_runs],
        "bare_runs_s": [round(t, 3) for t in bare_runs],
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"start to tray (xfce4-panel), median of {args.runs}: installed bundle "
              f"{app_s:.3f} s, bare PySide6 tray (PyInstaller) {bare_s:.3f} s, "
              f"ratio {app_s / bare_s:.2f}x (budget 2x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
