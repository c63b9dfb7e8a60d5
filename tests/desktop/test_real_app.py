"""The app itself on a real desktop: Debian's dunst and xfce4-panel, not the fakes.

What a fake could hide, checked against the real servers: that clicks come back to the app
(dunst sends ActionInvoked to the notifying connection only), that the icon the panel reads over
D-Bus changes while a job runs, and that the app without a tray host is still reachable.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.desktop import realdesktop
from tests.desktop.harness import Child, Spawn
from tests.desktop.realdesktop import RealDunst, RealPanel
from tests.desktop.test_tray_app import (
    APP,
    asleep_three_days,
    cli,
    due_text,
    settle,
    start_app,
    status,
)
from tests.support.fakes import wait_for
from tests.support.processes import kill

WAIT = 60.0
"""Seconds a test waits for what it checks: generous, for loaded machines."""

pytestmark = pytest.mark.gui


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def add(data: Path, name: str, *command: str, cron: str = "0 9 * * *") -> int:
    out = cli(data, "schedule", "add", name, "--cron", cron, "--tz", "UTC", "--", *command)
    return int(out.stdout)


def icon_of(panel: RealPanel, item: str) -> tuple[tuple[int, int, bytes], ...]:
    """The pixels the panel draws: the icons are published without a name (lxqt-panel draws a
    named icon only from its theme), so each look is told by its IconPixmap."""
    assert panel.item_property(item, "IconName") == ""
    return tuple((w, h, bytes(data)) for w, h, data in panel.item_property(item, "IconPixmap"))


def tooltip_of(panel: RealPanel, item: str) -> str:
    # Qt publishes the whole tooltip as the ToolTip's title.
    _icon, _pixmaps, tooltip, _text = panel.item_property(item, "ToolTip")
    return str(tooltip)


def test_a_late_catch_up_is_one_dunst_notification_and_its_click_opens_that_run(
    spawn: Spawn, real_dunst: RealDunst, real_panel: RealPanel, data: Path
) -> None:
    add(data, "Rate-limit report", "true")
    asleep_three_days(data)
    child = start_app(spawn, data)
    (item,) = real_panel.wait_for_items(1, timeout=60)  # the icon registered with the panel
    assert real_panel.item_property(item, "Status") == "Active"

    real_dunst.wait_for_count(1, timeout=60)
    settle(data)  # a second notification of the same wake would have been sent by now
    (shown,) = real_dunst.received()
    assert (shown["appname"], shown["summary"]) == ("domi-desktop", "Rate-limit report ran late")
    ran = r"\w{3} \d\d:\d\d" if " " in due_text(9) else r"\d\d:\d\d"  # both with a day, or none
    assert re.fullmatch(f"due {due_text(9)}, ran {ran} · 2 earlier runs skipped", shown["body"])
    assert shown["actions"] == {"default": "Open history"}
    assert shown["urgency"] == 1

    runs = json.loads(cli(data, "runs", "--json").stdout)
    (run,) = [r for r in runs if r["status"] != "skipped"]  # the skipped dues are runs too
    real_dunst.invoke_default_action()  # what a left click does
    opened = f"history window opened from a notification (run {run['id']})"
    wait_for(lambda: opened in child.stderr(), WAIT, "History to open on that run")


def test_a_failing_job_is_a_critical_notification(
    spawn: Spawn, real_dunst: RealDunst, real_panel: RealPanel, data: Path
) -> None:
    schedule_id = add(data, "Broken job", "sh", "-c", "exit 3")
    start_app(spawn, data)
    real_panel.wait_for_items(1, timeout=60)
    cli(data, "run-now", str(schedule_id), check=False)
    real_dunst.wait_for_count(1, timeout=60)
    (shown,) = real_dunst.received()
    assert (shown["summary"], shown["body"]) == ("Run failed: Broken job", "exit code 3")
    assert shown["urgency"] == 2  # critical


def test_the_icon_the_panel_reads_is_running_while_a_job_runs_and_idle_after(
    spawn: Spawn, real_dunst: RealDunst, real_panel: RealPanel, data: Path
) -> None:
    # The job runs until the test lets it end: the icons are checked against the job's life,
    # not against a clock (a loaded machine is slow to show them).
    go = data / "go"
    schedule_id = add(data, "Until let go", "sh", "-c", f"while [ ! -e {go} ]; do sleep 0.05; done")
    start_app(spawn, data)
    (item,) = real_panel.wait_for_items(1, timeout=WAIT)
    realdesktop.wait_until("the idle look", lambda: "Next: " in tooltip_of(real_panel, item), WAIT)
    idle = icon_of(real_panel, item)
    assert idle and "running" not in tooltip_of(real_panel, item)
    # run-now waits for the run's end: in the background, while the panel is asked.
    waiting = subprocess.Popen(
        [*APP, "run-now", str(schedule_id)],
        env={**os.environ, "DOMI_DATA_DIR": str(data)},
        stdout=subprocess.DEVNULL,
    )
    try:
        realdesktop.wait_until(
            "the running look", lambda: "1 running" in tooltip_of(real_panel, item), WAIT
        )
        running = icon_of(real_panel, item)
        assert running and running != idle
        assert status(data)["running_runs"]
        assert icon_of(real_panel, item) == running  # until the job ends
    finally:
        go.touch()
    try:
        realdesktop.wait_until(
            "the idle icon again", lambda: icon_of(real_panel, item) == idle, WAIT
        )
        assert "running" not in tooltip_of(real_panel, item)
        assert waiting.wait(WAIT) == 0
    finally:
        kill(waiting)


def test_without_a_tray_host_the_main_window_opens_with_quit(
    spawn: Spawn, real_dunst: RealDunst, data: Path
) -> None:
    add(data, "Daily", "true")
    child: Child = spawn(APP, env={"DOMI_DATA_DIR": str(data)})
    wait_for(lambda: status(data).get("running"), WAIT, "the app to answer on its socket")
    window = realdesktop.wait_for_window("^domi-desktop$", timeout=60)
    assert realdesktop.window_name(window) == "domi-desktop"
    assert "the main window stands in for it" in child.stderr()
    assert "stopping" in cli(data, "quit").stdout
    assert child.process.wait(timeout=60) == 0
