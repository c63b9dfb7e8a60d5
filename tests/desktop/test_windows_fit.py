"""At 200 % on a 1920x1080 screen (960x540 logical pixels) every window of the app opens within
the screen, in English and in Chinese: a real X server of that size (Xvfb), the real xcb platform,
the windows opened as the tray opens them (fit_probe.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop.harness import HERE, READY_TIMEOUT, read_first_line

pytestmark = [
    pytest.mark.gui,
    pytest.mark.linux_only,
    pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb"),
]


@pytest.fixture
def full_hd() -> Iterator[str]:
    """An X server of its own with one 1920x1080 screen; its DISPLAY."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    try:
        with os.fdopen(read) as stream:
            number = read_first_line(stream, READY_TIMEOUT)
        assert number, "Xvfb named no display"
        yield f":{number}"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_window_fits_at_2x_on_1920x1080(full_hd: str, tmp_path: Path, language: str) -> None:
    env = {
        **os.environ, "DISPLAY": full_hd, "QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": "2",
        "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), "TZ": "Europe/Riga",
    }  # fmt: skip
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no tray, no notifications: windows only
    done = subprocess.run(
        [sys.executable, str(HERE / "fit_probe.py"), language],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines and lines[-1] == {"done": True}, done.stderr[-3000:]
    windows = lines[:-1]
    assert {w["window"] for w in windows} == {
        "schedules", "history", "timeline", "settings", "editor new", "editor http",
    }  # fmt: skip
    for window in windows:
        x, y, width, height = window["frame"]
        rx, ry, rwidth, rheight = window["room"]
        assert window["scale"] == 2.0
        assert (rwidth, rheight) == (960, 540)
        assert rx <= x and ry <= y, window
        assert x + width <= rx + rwidth and y + height <= ry + rheight, window
        # Fitting by squeezing a column to a sliver of its title is not fitting.
        assert window["cut_headers"] == [], window
