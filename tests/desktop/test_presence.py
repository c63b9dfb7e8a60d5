"""The app's presence on a real desktop (xfce4-panel, lxqt-panel, xfwm4): quitting cleanly once
windows were opened and closed, and moving into a tray that appears after the app started."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from jeepney.io.blocking import open_dbus_connection
from PySide6.QtGui import QImage

from tests.desktop import realdesktop
from tests.desktop.harness import Child, Spawn, child_env
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
    assert spawn(APP, env={"DOMI_DATA_DIR": str(data)}).process.wait(timeout=60) == 0
    window = realdesktop.wait_for_window("^domi-desktop$", timeout=60)
    press(window, "ctrl+n")
    editor = realdesktop.wait_for_window("^New schedule$", timeout=60)
    press(editor, "Escape")  # no edits: closed (and deleted) without a question
    realdesktop.wait_until("the editor to close", lambda: gone("^New schedule$"), 60)
    return window


def ends_cleanly(child: Child) -> None:
    assert child.process.wait(timeout=60) == 0
    assert "Traceback" not in child.stderr()


@pytest.mark.parametrize("way", ["cli", "window", "tray"])
def test_quit_after_an_editor_was_opened_exits_0_without_a_traceback(
    spawn: Spawn, real_panel: RealPanel, real_wm: RealWM, data: Path, way: str
) -> None:
    child = start_app(spawn, data)
    (item,) = real_panel.wait_for_items(1, timeout=60)
    window = open_and_close_an_editor(spawn, data)
    if way == "cli":
        assert "stopping" in cli(data, "quit").stdout
    elif way == "window":
        press(window, "ctrl+q")
    else:
        real_panel.click_menu_entry(item, "Quit")
    ends_cleanly(child)


PANEL_HEIGHT = 32
"""Both panels are preseeded 32 pixels high along the top of the screen."""
LATE = 10.0
"""How long after the app the panel starts, as a panel may at login (the issue's scenario)."""


def icon_pixels_in_panel(shot: Path) -> int:
    """How many pixels of the panel's strip are the icon's blue (its face: #3b82f6 to #1e40af);
    neither panel draws that blue of its own."""
    image = QImage(str(shot))
    assert not image.isNull(), shot
    count = 0
    for y in range(PANEL_HEIGHT):
        for x in range(image.width()):
            colour = image.pixelColor(x, y)
            if colour.blue() > 140 and colour.red() < 90 and colour.blue() - colour.green() > 60:
                count += 1
    return count


def shows_the_icon(tmp_path: Path) -> int | None:
    found = icon_pixels_in_panel(realdesktop.screenshot(tmp_path / "screen.png"))
    return found if found >= 50 else None


def start_late_panel(program: str, env: dict[str, str], tmp_path: Path) -> RealPanel:
    conn = open_dbus_connection("SESSION")
    try:
        if program == "lxqt-panel":
            return realdesktop.start_lxqt_panel(env, tmp_path, conn)
        realdesktop.preseed_panel(Path(env["XDG_CONFIG_HOME"]))
        xfconfd = realdesktop.start_xfconfd(env, tmp_path, conn)
        try:
            panel = realdesktop.start_panel(env, tmp_path, conn)
        except BaseException:
            xfconfd.stop()
            raise
        panel.helpers.append(xfconfd)
        return panel
    except BaseException:
        conn.close()
        raise


@pytest.mark.parametrize("program", ["xfce4-panel", "lxqt-panel"])
def test_a_panel_started_after_the_app_shows_the_icon(
    spawn: Spawn, tmp_path: Path, data: Path, program: str
) -> None:
    realdesktop.require_programs(**{program: program, "import": "imagemagick"})
    child = start_app(spawn, data)
    # No tray yet: the window stands in, and says what closing it does.
    realdesktop.wait_for_window("^domi-desktop$", timeout=60)
    realdesktop.wait_until(
        "the app to watch for a tray", lambda: "watching for one" in child.stderr(), 60
    )
    assert shows_the_icon(tmp_path) is None
    time.sleep(LATE)  # the scenario itself: the panel comes late
    # NO_AT_BRIDGE: GTK would otherwise activate the accessibility bus for every program.
    panel = start_late_panel(program, child_env(tmp_path, {"NO_AT_BRIDGE": "1"}), tmp_path)
    try:
        (item,) = panel.wait_for_items(1, timeout=60)
        assert panel.item_property(item, "Status") == "Active"
        realdesktop.wait_until(
            "the icon's pixels in the panel", lambda: shows_the_icon(tmp_path), 60
        )
        assert "a system tray appeared" in child.stderr()
    finally:
        panel.stop()
        print(f"--- {program}\n{panel.process.output()[-3000:]}")
