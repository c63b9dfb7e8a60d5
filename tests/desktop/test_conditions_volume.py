"""UDisks2 on the private system bus, read and watched by the Linux disk reader (in process), and
the whole source told to watch disks only while a job waits for one."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from domi_desktop.model import Volume, Wanted
from domi_desktop.platform.conditions.resources import ResourceReaders
from domi_desktop.platform.conditions.udisks import UDisks2Reader
from tests.desktop.harness import FakeNetworkManager, child_env
from tests.desktop.udisks import FakeUDisks2

pytestmark = pytest.mark.gui

WAIT_MS = 60_000
"""A generous deadline (loaded machines); how fast the signal comes is measured elsewhere."""

ROOT = Volume("root", "0000-ROOT", "/")
BACKUP = Volume("Backup", "1234-ABCD", "/media/me/Backup")


def test_it_lists_the_mounted_disks(fake_udisks2: FakeUDisks2, qapp: QCoreApplication) -> None:
    reader = UDisks2Reader()
    assert reader.read() == (ROOT,)
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    assert reader.read() == (ROOT,), "plugged but not mounted is not there yet"
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    assert reader.read() == (ROOT, BACKUP)
    fake_udisks2.unplug("sdb1")
    assert reader.read() == (ROOT,)


def test_plugging_mounting_and_pulling_are_each_reported(
    fake_udisks2: FakeUDisks2, qtbot: QtBot
) -> None:
    reader = UDisks2Reader()
    changes: list[float] = []
    assert reader.start(lambda: changes.append(time.monotonic()))
    assert reader.status == "watching UDisks2"
    for step in (
        lambda: fake_udisks2.plug("sdb1", "Backup", "1234-ABCD"),
        lambda: fake_udisks2.mount("sdb1", "/media/me/Backup"),
        lambda: fake_udisks2.unplug("sdb1"),
    ):
        seen = len(changes)
        step()
        qtbot.waitUntil(lambda seen=seen: len(changes) > seen, timeout=WAIT_MS)
    reader.stop()
    count = len(changes)
    fake_udisks2.plug("sdc1", "Stick", "5555-6666")
    qtbot.wait(300)
    assert len(changes) == count, "a stopped reader reports nothing"


def test_without_udisks2_no_disk_is_mounted_and_it_says_why(
    system_bus: str, qapp: QCoreApplication
) -> None:
    reader = UDisks2Reader()
    assert reader.read() == ()
    assert reader.status.startswith("cannot list the disks: ")


def test_disks_are_watched_only_while_a_job_waits_for_one(
    fake_udisks2: FakeUDisks2, qtbot: QtBot
) -> None:
    readers = ResourceReaders(UDisks2Reader())
    changes: list[float] = []
    assert readers.start(lambda: changes.append(time.monotonic()))
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    qtbot.wait(300)
    assert changes == [], "nothing waits for a disk: nothing is watched"
    assert readers.status == ""

    readers.want(Wanted(volumes=frozenset({"Backup"})))
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    qtbot.waitUntil(lambda: bool(changes), timeout=WAIT_MS)
    assert readers.status == "disks: watching UDisks2"

    readers.want(Wanted())
    count = len(changes)
    fake_udisks2.unplug("sdb1")
    qtbot.wait(300)
    assert len(changes) == count
    readers.stop()


def test_the_conditions_command_lists_the_disks_and_network_names(
    fake_udisks2: FakeUDisks2, fake_networkmanager: FakeNetworkManager, tmp_path: Path
) -> None:
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", "conditions"],
        env={**child_env(tmp_path), "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    state = json.loads(line)
    assert state["volumes"] == [
        ["root", "0000-ROOT", "/"],
        ["Backup", "1234-ABCD", "/media/me/Backup"],
    ]
    assert state["network_names"] == ["ethernet"]
