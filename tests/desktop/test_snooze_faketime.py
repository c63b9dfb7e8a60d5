"""Snooze on the real desktop, end to end: the real tray app under libfaketime shows its heads-up
on real dunst five minutes before a daily run; "Snooze 1 hour" pressed on it reaches the store,
nothing runs at the due, and the run starts an hour later, recorded late against its own due."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from jeepney import DBusAddress, new_signal
from jeepney.io.blocking import open_dbus_connection

from tests.desktop.harness import FakeLogind, Spawn
from tests.desktop.realdesktop import RealDunst, RealPanel
from tests.desktop.test_history_across_wake import Laptop
from tests.support import faketime
from tests.support.fakes import wait_for

pytestmark = [
    pytest.mark.gui,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

APP = [sys.executable, "-m", "domi_desktop"]
WAIT = 60.0
"""Real seconds a test waits for what it checks: a safety net; the press's time is printed."""


@pytest.fixture
def laptop(tmp_path: Path, spawn: Spawn, fake_logind: FakeLogind) -> Iterator[Laptop]:
    clock = faketime.fake_clock(tmp_path)
    made = Laptop(clock, tmp_path / "data")
    made.data.mkdir()
    top = (datetime.now(UTC) + timedelta(days=10)).replace(minute=0, second=0, microsecond=0)
    made.at(top - timedelta(minutes=4, seconds=30))  # inside the heads-up's five minutes
    daily = f"0 {top.hour} * * *"  # a snooze shorter than the gap to the next run
    made.cli("schedule", "add", "Backup", "--cron", daily, "--tz", "UTC", "--", "true")
    made.app = spawn(APP, env=made.overrides())
    wait_for(
        lambda: made.cli("status", "--json", check=False).get("running"), WAIT, "the app running"
    )
    yield made


def press(notification_id: int, key: str) -> None:
    with open_dbus_connection("SESSION") as conn:
        address = DBusAddress(
            "/org/freedesktop/Notifications", interface="org.freedesktop.Notifications"
        )
        conn.send(new_signal(address, "ActionInvoked", "us", (notification_id, key)))


def test_snooze_on_the_notification_runs_it_an_hour_later_late_against_its_due(
    laptop: Laptop, fake_logind: FakeLogind, real_panel: RealPanel, real_dunst: RealDunst
) -> None:
    real_panel.wait_for_items(1, timeout=WAIT)
    real_dunst.wait_for_count(1, timeout=WAIT)  # the heads-up, at the app's next look (20 s)
    (shown,) = real_dunst.received()
    assert shown["summary"].startswith("Runs at ") and "Backup" in shown["summary"]
    assert shown["actions"]["snooze-3600"] == "Snooze 1 hour"
    time.sleep(0.5)  # the reply to Notify (the id a press names) has reached the app
    pressed = time.monotonic()
    press(shown["id"], "snooze-3600")
    held = lambda: laptop.cli("schedule", "show", "1", "--json").get("snoozed")  # noqa: E731
    wait_for(held, WAIT, "the snooze in the store")
    print(f"snooze pressed -> in the store in {time.monotonic() - pressed:.2f} s")
    snoozed = held()
    due, until = datetime.fromisoformat(snoozed["due"]), datetime.fromisoformat(snoozed["until"])
    assert until - due == timedelta(hours=1)

    laptop.at(due + timedelta(minutes=30))  # the due has passed: held, nothing runs
    fake_logind.prepare_for_sleep(False)
    time.sleep(2)
    assert laptop.runs() == []

    laptop.at(until + timedelta(seconds=5))
    fake_logind.prepare_for_sleep(False)
    wait_for(lambda: [r["status"] for r in laptop.runs()] == ["succeeded"], WAIT, "the run")
    (run,) = laptop.runs()
    assert datetime.fromisoformat(run["due"]) == due and run["late"]
    assert datetime.fromisoformat(run["started_at"]) >= until
