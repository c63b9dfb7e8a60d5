"""The tray app on Windows with its real window, driven from outside as a user would: a second
launch shows the Schedules window, the CLI adds a schedule over the named pipe, the window shows it.

The Windows twin of tests/unit/app/test_main_window.py's offscreen check that a schedule added through
the CLI shows without a refresh: here the app is the process a user starts, on Qt's Windows
platform, and the window is a real Win32 one (under Wine too, which is 5-20x slower than Windows:
every wait is for an event, with a deadline only a hang reaches).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import pytest

from tests.windows.test_app_on_windows import (
    CLI_TIMEOUT,
    START_TIMEOUT,
    STOP_TIMEOUT,
    App,
    running,
    wait_until,
)

pytestmark = pytest.mark.windows_only

OBSERVER = Path(__file__).with_name("gui_observer.py")
WINDOWED_TEST = Path(__file__).resolve().parents[2] / "packaging" / "windowed_test.py"


class Observed:
    """What the observer printed: each state of the Schedules window, in order."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self.states: list[dict[str, Any]] = []
        self.other: list[str] = []
        self._stdout = stdout
        self._reader = threading.Thread(target=self._read, args=(stdout,), daemon=True)
        self._reader.start()

    def close(self) -> None:
        """Once the app has ended: its output read to the end, the pipe closed."""
        self._reader.join(timeout=STOP_TIMEOUT)
        self._stdout.close()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            try:
                state = json.loads(line)
            except ValueError:
                self.other.append(line.decode(errors="replace"))
                continue
            self.states.append(state)

    def last(self) -> dict[str, Any]:
        return self.states[-1] if self.states else {"hwnd": None, "rows": None}


@pytest.fixture
def gui_app(tmp_path: Path) -> Iterator[tuple[App, Observed]]:
    data = tmp_path / "data"
    data.mkdir()
    # Qt's own platform, not the suite's offscreen one: the window is a real Win32 window.
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("QT_QPA_PLATFORM", "QT_QPA_FONTDIR")
    }
    env["DOMI_DATA_DIR"] = str(data)
    log = tmp_path / "app.stderr"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(OBSERVER)],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
        )  # fmt: skip
    app = App(process, env, log)
    assert process.stdout is not None
    observed = Observed(process.stdout)
    try:
        yield app, observed
    finally:
        if process.poll() is None:
            try:
                app.cli("quit", timeout=STOP_TIMEOUT)
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT)
        observed.close()
        print(log.read_text(errors="replace"))


def visible_title(hwnd: int) -> str | None:
    """The title of ``hwnd`` if it is a visible window, read through user32 as another program
    would (not through Qt)."""
    from ctypes import wintypes

    user32 = ctypes.WinDLL("user32", use_last_error=True)
    user32.IsWindowVisible.argtypes = (wintypes.HWND,)
    user32.IsWindowVisible.restype = wintypes.BOOL
    user32.GetWindowTextW.argtypes = (wintypes.HWND, wintypes.LPWSTR, ctypes.c_int)
    user32.GetWindowTextW.restype = ctypes.c_int
    if not user32.IsWindowVisible(hwnd):
        return None
    text = ctypes.create_unicode_buffer(256)
    user32.GetWindowTextW(hwnd, text, len(text))
    return text.value


def test_a_schedule_added_through_the_cli_shows_in_the_open_window_without_a_refresh(
    gui_app: tuple[App, Observed],
) -> None:
    app, observed = gui_app
    running(app)
    # A second launch, as from the Start menu: it asks the running app to show its window.
    second = app.cli(timeout=CLI_TIMEOUT)
    assert second.returncode == 0, second.stderr
    state = wait_until(
        lambda: observed.last()["rows"] is not None and observed.last(),
        START_TIMEOUT,
        f"the Schedules window shown (observer said {observed.states[-3:]} {observed.other})",
    )
    assert "Via the CLI" not in state["rows"]
    assert visible_title(state["hwnd"]) == "domi-desktop"

    added = app.cli(
        "schedule", "add", "Via the CLI", "--cron", "0 5 * * *", "--", "cmd", "/c", "echo"
    )
    assert added.returncode == 0, added.stderr
    # The window has no refresh timer: only the change the named pipe reported can show it.
    wait_until(
        lambda: "Via the CLI" in (observed.last()["rows"] or []),
        CLI_TIMEOUT,
        f"the new row in the window (its last rows: {observed.last()['rows']})",
    )
    assert visible_title(observed.last()["hwnd"]) == "domi-desktop"

    done = app.cli("quit")
    assert done.returncode == 0, done.stderr
    assert app.process.wait(timeout=STOP_TIMEOUT) == 0


def load_windowed_test(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("windowed_test", WINDOWED_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclass looks its own module up by name as it is made; it imports smoke_test beside it.
    monkeypatch.setitem(sys.modules, spec.name, module)
    monkeypatch.syspath_prepend(str(WINDOWED_TEST.parent))
    spec.loader.exec_module(module)
    return module


def test_the_release_check_of_the_windowed_app_passes_on_pythonw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """packaging/windowed_test.py, which the release runs on the installed domi-desktop.exe, here
    on pythonw.exe: a windowed process as that build is, with no console and no stderr."""
    windowed = load_windowed_test(monkeypatch)
    pythonw = Path(sys.executable).with_name("pythonw.exe")
    launch = windowed.Launch(
        start=(str(pythonw), "-m", "domi_desktop"),
        cli=(sys.executable, "-m", "domi_desktop"),
        owns_process=True,
        post_wake=windowed.post_wm_powerbroadcast,
    )
    results = windowed.check_windowed(
        launch, tmp_path / "data", dict(os.environ), timeout=START_TIMEOUT
    )
    assert results["pid"] != os.getpid() and "WM_POWERBROADCAST" in results["wake"]
