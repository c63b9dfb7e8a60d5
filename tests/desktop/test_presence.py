"""The app's presence on a real desktop (xfce4-panel, xfwm4): quitting cleanly once windows were
opened and closed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.desktop import realdesktop
from tests.desktop.harness import Child, Spawn
from tests.desktop.realdesktop import RealPanel, RealWM
from tests.desktop.test_tray_app import APP, cli, start_app

pytestmark = pytest.mark.gui


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=30, env=os.environ)


def press(window: int, keys: str) -> None:
    xdotool("windowactivate", "--sync", str(window))
    xdotool("key", "--clearmodifiers", keys)


def gone(title: str) -> bool:
    return not realdesktop.find_windows(title)


def open_and_close_an_editor(spawn: Spawn, data: Path) -> int:
    """The Schedules window (a second launch shows it), an editor from it, closed: the window."""
    assert spawn(APP, env={"DOMI_DATA_DIR": str(data)}).process.wait(timeout=30) == 0
    window = realdesktop.wait_for_window("^domi-desktop$", timeout=20)
    press(window, "ctrl+n")
    editor = realdesktop.wait_for_window("^New schedule$", timeout=20)
    press(editor, "Escape")  # no edits: closed (and deleted) without a question
    realdesktop.wait_until("the editor to close", lambda: gone("^New schedule$"), 20)
    return window


def ends_cleanly(child: Child) -> None:
    assert child.process.wait(timeout=30) == 0
    assert "Traceback" not in child.stderr()


@pytest.mark.parametrize("way", ["cli", "window"])
def test_quit_after_an_editor_was_opened_exits_0_without_a_traceback(
    spawn: Spawn, real_panel: RealPanel, real_wm: RealWM, data: Path, way: str
) -> None:
    child = start_app(spawn, data)
    real_panel.wait_for_items(1, timeout=20)
    window = open_and_close_an_editor(spawn, data)
    if way == "cli":
        assert "stopping" in cli(data, "quit").stdout
    else:
        press(window, "ctrl+q")
    ends_cleanly(child)
