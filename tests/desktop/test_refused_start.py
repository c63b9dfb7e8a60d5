"""The tray app on a database it cannot use: it exits 2 with the reason on stderr and
in a desktop notification, since started from a menu or at login it has no terminal."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from tests.desktop.harness import FakeDesktop, Spawn
from tests.desktop.test_tray_app import APP, WAIT, cli

pytestmark = pytest.mark.gui


def not_a_database(db: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)


def damaged_inside(db: Path) -> None:
    """A sound header over a schedules page of garbage: found only by reading every page."""
    with closing(sqlite3.connect(db)) as connection:
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'schedules'"
        ).fetchone()
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    with db.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)


@pytest.mark.parametrize("damage", [not_a_database, damaged_inside])
def test_a_database_it_cannot_use_is_said_in_a_notification_and_it_exits_2(
    spawn: Spawn, fake_desktop: FakeDesktop, tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cli(data, "schedule", "add", "kept", "--cron", "0 9 * * *", "--", "true")
    db = data / "domi.sqlite3"
    damage(db)
    child = spawn(APP, env={"DOMI_DATA_DIR": str(data)})
    assert child.process.wait(timeout=WAIT) == 2
    (reason,) = [line for line in child.stderr().splitlines() if str(db) in line]
    assert reason.startswith("domi-desktop: ")
    (notify,) = fake_desktop.wait_for("Notify", timeout=WAIT)
    app_name, _replaces, _icon, summary, body, _actions, _hints, _timeout = notify["args"]
    assert (app_name, summary) == ("domi-desktop", "domi-desktop cannot use its database")
    assert str(db) in body and "Traceback" not in child.stderr()
