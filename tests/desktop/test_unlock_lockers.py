"""An unlock as desktops tell it: a stand-in screen locker on the session bus
(``org.freedesktop.ScreenSaver`` / ``org.gnome.ScreenSaver`` ``ActiveChanged``) and a stand-in
logind on the private system bus whose session's ``LockedHint`` goes true and false. The headless
app runs an "at unlock" schedule once per unlock, whichever of the signals arrive."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jeepney.io.blocking import open_dbus_connection

from tests.desktop.harness import HERE, FakeLogind, _FakeService, child_env, start_fake
from tests.desktop.headless_app import App
from tests.support import faketime

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

DEADLINE = 60.0
"""Real seconds for what should take well under one (a loaded machine)."""


class ScreenLocker(_FakeService):
    """fake_screensaver.py: ``lock(which)`` / ``unlock(which)`` with which in "freedesktop",
    "gnome" or "both"."""

    bus_name = "org.freedesktop.ScreenSaver"

    def lock(self, which: str) -> None:
        self.control("SetActive", "bs", True, which)

    def unlock(self, which: str) -> None:
        self.control("SetActive", "bs", False, which)


class LockingLogind(FakeLogind):
    """fake_logind_locking.py: the stand-in logind with a LockedHint and Session.Lock."""

    def hint(self, locked: bool) -> None:
        self.control("SetLockedHint", "b", locked)

    def lock(self) -> None:
        self.control("EmitLock", "")

    def unlock(self) -> None:
        self.control("EmitUnlock", "")


@pytest.fixture
def locker(tmp_path: Path) -> Iterator[ScreenLocker]:
    log_path = tmp_path / "fake_screensaver.jsonl"
    child = start_fake(HERE / "fake_screensaver.py", [], log_path, child_env(tmp_path))
    control = open_dbus_connection("SESSION")
    try:
        yield ScreenLocker(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


@pytest.fixture
def logind(system_bus: str, tmp_path: Path) -> Iterator[LockingLogind]:
    log_path = tmp_path / "fake_logind.jsonl"
    child = start_fake(
        HERE / "fake_logind_locking.py", ["--address", system_bus], log_path, child_env(tmp_path)
    )
    control = open_dbus_connection(system_bus)
    try:
        yield LockingLogind(child, log_path, control)
    finally:
        control.close()
        child.stop()
        print(child.report())


def wait_for(what: Callable[[], bool], why: str, app: App) -> None:
    deadline = time.monotonic() + DEADLINE
    while not what():
        assert time.monotonic() < deadline, f"{why}\n{app.log()}"
        time.sleep(0.1)


def unlock_runs(app: App, schedule: int) -> list[tuple[str, str]]:
    found: list[dict[str, Any]] = app.runs(schedule)
    return [(run["trigger"], run["status"]) for run in found if run["status"] != "running"]


def test_an_unlock_runs_the_job_once_whichever_signals_tell_it(
    app: App, locker: ScreenLocker, logind: LockingLogind
) -> None:
    out = app.root / "unlocked.txt"
    added = app.cli(
        "schedule", "add", "at unlock", "--cron", "0 0 1 1 *", "--tz", "UTC", "--at-unlock",
        "--overlap", "parallel",
        "--json", "--", sys.executable, "-c", f"open({str(out)!r}, 'a').write('ran\\n')",
    )  # fmt: skip
    schedule = int(added["id"])
    app.start()
    wait_for(lambda: "screen lockers' ActiveChanged" in app.log(), "not listening to lockers", app)
    wait_for(lambda: "LockedHint of /org" in app.log(), "not listening to logind", app)

    def ran() -> int:
        return len(out.read_text().splitlines()) if out.exists() else 0

    steps: dict[str, Callable[[], None]] = {
        "gnome on": lambda: locker.lock("gnome"),
        "gnome off": lambda: locker.unlock("gnome"),
        "both on": lambda: locker.lock("both"),
        "both off": lambda: locker.unlock("both"),
        "freedesktop on": lambda: locker.lock("freedesktop"),
        "freedesktop off": lambda: locker.unlock("freedesktop"),
        "hint on": lambda: logind.hint(True),
        "hint off": lambda: logind.hint(False),
        "Lock": logind.lock,
        "Unlock": logind.unlock,
    }
    unlocks = [
        # GNOME Shell: its own locker's signal and the session's hint.
        ("GNOME", ["gnome on", "hint on"], ["gnome off", "hint off"]),
        # KDE: both lockers' names and the hint.
        ("KDE", ["both on", "hint on"], ["hint off", "both off"]),
        # xfce4-screensaver, light-locker: only the freedesktop locker.
        ("a locker alone", ["freedesktop on"], ["freedesktop off"]),
        # A locker on another bus than ours: only logind's hint.
        ("the hint alone", ["hint on"], ["hint off"]),
        # loginctl lock-session / unlock-session, with the hint a locker sets.
        ("loginctl", ["Lock", "hint on"], ["Unlock", "hint off"]),
    ]
    for count, (who, lock, unlock) in enumerate(unlocks, start=1):
        for step in [*lock, *unlock]:
            steps[step]()
        wait_for(lambda: ran() >= count, f"no run at the unlock told by {who}", app)  # noqa: B023
        app.poke()
        time.sleep(1.0)  # a second run for the same unlock would have its moment
        assert ran() == count, f"the unlock told by {who} ran the job {ran() - count + 1} times"

    wait_for(lambda: len(unlock_runs(app, schedule)) == len(unlocks), "runs not recorded", app)
    assert unlock_runs(app, schedule) == [("unlock", "succeeded")] * len(unlocks)
