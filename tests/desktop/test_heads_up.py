"""Skip and snooze on the real desktop: a heads-up notification on real dunst offers its Skip and
Snooze 1 hour buttons and a press (ActionInvoked) reaches the store through the tray app; "Skip
next" clicked in the real xfce4-panel's menu of the real app reaches the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, new_signal
from jeepney.io.blocking import open_dbus_connection
from PySide6.QtWidgets import QApplication

from domi_desktop.app.gui import connect
from domi_desktop.model import CommandAction
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui import heads_up
from domi_desktop.ui.tray import TrayApp
from tests.desktop.harness import Spawn
from tests.desktop.realdesktop import RealDunst, RealPanel
from tests.support.engine import running_engine

pytestmark = pytest.mark.gui

WAIT_MS = 60_000
"""A safety net for a loaded machine; the time a press takes is printed, not asserted."""
NOTIFICATIONS = "org.freedesktop.Notifications"


@pytest.fixture
def tray(qapp: QApplication, tmp_path: Path) -> Iterator[TrayApp]:
    now = datetime.now(UTC)
    with Store.open(tmp_path / "data", now=now) as store:
        store.create_schedule("Backup", "0 * * * *", "UTC",
                              CommandAction(argv=(sys.executable, "-c", "pass")), now=now)  # fmt: skip
        with running_engine(store, secrets=MemorySecretStore()) as engine:
            app = TrayApp(qapp, engine.handle)
            connect(app, engine.handle)
            yield app
            app.close()


def press(notification_id: int, key: str) -> None:
    """What dunst sends when a button is pressed; the notifier's match rule takes it as sent."""
    with open_dbus_connection("SESSION") as conn:
        address = DBusAddress("/org/freedesktop/Notifications", interface=NOTIFICATIONS)
        conn.send(new_signal(address, "ActionInvoked", "us", (notification_id, key)))


def test_snooze_pressed_on_a_dunst_notification_reaches_the_store(
    real_dunst: RealDunst, tray: TrayApp, qtbot: Any
) -> None:
    schedule = tray.host.service.schedule(1)
    due = tray.host.engine.state.next_fire(1)
    assert due is not None
    tray.notifier.notify(heads_up.heads_up_notice(schedule, due))
    real_dunst.wait_for_count(1)
    (shown,) = real_dunst.received()
    assert shown["actions"] == {
        "default": "Open history",
        heads_up.SKIP: "Skip",
        heads_up.SNOOZE: "Snooze 1 hour",
    }
    qtbot.wait(300)  # the reply to Notify (the id the press names) has reached the notifier
    began = time.monotonic()
    press(shown["id"], heads_up.SNOOZE)
    qtbot.waitUntil(
        lambda: tray.host.service.schedule(1).policies.hold is not None, timeout=WAIT_MS
    )
    print(f"snooze pressed -> stored in {time.monotonic() - began:.3f} s")
    hold = tray.host.service.schedule(1).policies.hold
    assert hold is not None and hold.due == due and hold.until == due + timedelta(hours=1)
    qtbot.waitUntil(lambda: tray.host.engine.state.next_fire(1) == hold.until, timeout=WAIT_MS)


APP = [sys.executable, "-m", "domi_desktop"]


def cli(data: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMI_")}
    done = subprocess.run(
        [*APP, *args], capture_output=True, text=True, env={**env, "DOMI_DATA_DIR": str(data)},
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, f"{args}: {done.stderr}"
    return json.loads(done.stdout) if "--json" in args else done.stdout


def test_skip_next_clicked_in_the_real_panel_s_menu_reaches_the_store(
    real_panel: RealPanel, real_dunst: RealDunst, spawn: Spawn, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    cli(data, "schedule", "add", "Backup", "--cron", "0 3 * * *", "--tz", "UTC", "--", "true")
    spawn(APP, env={"DOMI_DATA_DIR": str(data)})
    (item,) = real_panel.wait_for_items(1, timeout=60)
    deadline = time.monotonic() + 60
    while True:  # the menu is built once the engine has planned: its entries come then
        try:
            real_panel.click_menu_entry(item, "Skip next")
            break
        except AssertionError:
            assert time.monotonic() < deadline, "no Skip next in the tray's menu"
            time.sleep(0.5)
    shown: dict[str, Any] = {}
    while not shown.get("skipping"):
        assert time.monotonic() < deadline, f"not skipped: {shown}"
        time.sleep(0.2)
        shown = cli(data, "schedule", "show", "1", "--json")
    assert shown["skipping"] == shown["next_run"]
