"""logind's sleep inhibitor, taken and given back through the fake logind on the private bus."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import QCoreApplication

from domi_desktop.platform.inhibit import sleep_inhibitor_for_platform
from domi_desktop.platform.inhibit.base import NoInhibition
from domi_desktop.platform.inhibit.linux import LogindSleepInhibitor
from tests.desktop.harness import FakeLogind
from tests.support.fakes import wait_for

pytestmark = pytest.mark.gui


def held(fake_logind: FakeLogind, count: int) -> None:
    """Our own fd closes at once; QtDBus's copy of it goes with its connection, a moment later."""
    wait_for(lambda: fake_logind.inhibitors_held() == count, 30, f"{count} inhibitor(s) held")


def test_it_holds_an_inhibitor_exactly_until_released(
    fake_logind: FakeLogind, qapp: QCoreApplication
) -> None:
    inhibitor = sleep_inhibitor_for_platform("linux")
    assert isinstance(inhibitor, LogindSleepInhibitor)
    held(fake_logind, 0)
    first = inhibitor.acquire("Backup is running")
    second = inhibitor.acquire("Sync is running")
    held(fake_logind, 2)
    assert inhibitor.status == "logind keeps the machine awake (Sync is running)"
    (call,) = [c for c in fake_logind.calls("Inhibit")][:1]
    assert call["args"] == ["sleep", "domi-desktop", "Backup is running", "block"]
    first.release()
    held(fake_logind, 1)
    first.release()  # a second release does nothing, and certainly not close someone else's fd
    held(fake_logind, 1)
    second.release()
    held(fake_logind, 0)


def test_a_job_started_while_held_does_not_inherit_the_inhibitor(
    fake_logind: FakeLogind, qapp: QCoreApplication
) -> None:
    handle = LogindSleepInhibitor().acquire("Backup is running")
    # A job that outlives its run (close_fds=False: the widest a runner could be) holds nothing.
    straggler = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], close_fds=False
    )
    try:
        handle.release()
        held(fake_logind, 0)
    finally:
        straggler.kill()
        straggler.wait()


def test_the_inhibitor_ends_with_a_crashed_process(fake_logind: FakeLogind) -> None:
    code = (
        "import os\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "from domi_desktop.platform.inhibit.linux import LogindSleepInhibitor\n"
        "app = QCoreApplication([])\n"
        "LogindSleepInhibitor().acquire('crash test')\n"
        "print('held', flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30
    )
    assert result.stdout == "held\n", result.stderr
    assert result.returncode == -9
    held(fake_logind, 0)
    assert len(fake_logind.calls("Inhibit")) == 1


def test_without_logind_it_says_why_and_holds_nothing(
    system_bus: str, qapp: QCoreApplication
) -> None:
    inhibitor = LogindSleepInhibitor()
    handle = inhibitor.acquire("Backup is running")
    assert isinstance(handle, NoInhibition)
    assert inhibitor.status.startswith("logind refused Inhibit: org.freedesktop.DBus.Error.")
    handle.release()
