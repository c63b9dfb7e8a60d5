"""The systemd user timer that wakes the machine, armed on a fake user manager on this test's
session bus (fake_systemd.py records what it is asked). The real ``systemd-analyze calendar``
reads the timer's OnCalendar in tests/platform/test_wake_linux.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg

from domi_desktop.platform.wake.linux import TimerfdWakeAlarm, linux_wake_alarm
from domi_desktop.platform.wake.systemd import (
    MANAGER,
    SYSTEMD,
    SYSTEMD_PATH,
    SystemdWakeAlarm,
    calendar_text,
    timer_properties,
)
from tests.desktop.harness import HERE, READY_TIMEOUT, REPO, Child, child_env, require_desktop_env

pytestmark = [pytest.mark.gui, pytest.mark.linux_only]

FAKE_SYSTEMD = HERE / "fake_systemd.py"


class Manager:
    def __init__(self, child: Child, log_path: Path) -> None:
        self.child = child
        self.log_path = log_path

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines(keepends=True)
        entries = [json.loads(line) for line in lines if line.endswith("\n")]
        return [e for e in entries if method is None or e["method"] == method]


@pytest.fixture
def start_manager(tmp_path: Path) -> Iterator[Callable[..., Manager]]:
    """start_manager(version="255.4-1", capable=True): the fake user manager, running."""
    require_desktop_env()
    started: list[Child] = []

    def start(version: str = "255.4-1", *, capable: bool = True) -> Manager:
        log_path = tmp_path / f"fake_systemd_{len(started)}.jsonl"
        argv = [sys.executable, str(FAKE_SYSTEMD), "--log", str(log_path), "--version", version]
        if not capable:
            capsh = shutil.which("capsh")
            if capsh is None:
                pytest.fail("capsh is missing (libcap2-bin: make system-deps)", pytrace=False)
            argv = [capsh, "--drop=cap_wake_alarm", "--", "-c", 'exec "$0" "$@"', *argv]
        child = Child(argv, child_env(tmp_path), REPO)
        started.append(child)
        child.wait_for_line("READY", timeout=READY_TIMEOUT)
        return Manager(child, log_path)

    yield start
    for child in started:
        child.stop()
        print(child.report())


def properties(pairs: list[list[Any]]) -> dict[str, Any]:
    return {name: value for name, value in pairs}


def test_it_arms_a_transient_waking_timer_moves_it_and_takes_it_back(
    start_manager: Callable[..., Manager],
) -> None:
    manager = start_manager()
    alarm = SystemdWakeAlarm()
    assert alarm.capability() is None
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
    assert alarm.arm(at)
    (first,) = manager.calls("StartTransientUnit")
    name, mode, timer, aux = first["args"]
    assert re.fullmatch(r"domi-desktop-wake-\d+-\d+\.timer", name)
    assert mode == "replace"
    assert properties(timer) == {
        "Description": "domi-desktop: wake the computer to run a schedule",
        "OnCalendar": calendar_text(at),
        "WakeSystem": True,
        "AccuracyUSec": 1_000_000,
        "RemainAfterElapse": False,
    }
    ((service, service_properties),) = aux
    assert service == name.removesuffix(".timer") + ".service"  # the unit the timer starts
    true = shutil.which("true") or "/bin/true"
    assert properties(service_properties)["ExecStart"] == [[true, [true], False]]
    assert alarm.status == f"the machine wakes at {calendar_text(at)} ({alarm.via} {name})"

    later = at + timedelta(hours=1)
    assert alarm.arm(later)
    second = manager.calls("StartTransientUnit")[1]
    assert second["args"][0] != name  # a new name: the old one may linger until collected
    assert properties(second["args"][2])["OnCalendar"] == calendar_text(later)
    assert [c["args"] for c in manager.calls("StopUnit")] == [[name, "replace"]]

    alarm.cancel()
    assert [c["args"][0] for c in manager.calls("StopUnit")] == [name, second["args"][0]]
    alarm.cancel()  # nothing armed: nothing asked
    assert len(manager.calls("StopUnit")) == 2


def test_a_manager_before_systemd_254_cannot_wake_the_machine(
    start_manager: Callable[..., Manager],
) -> None:
    start_manager("252.39-1~deb12u2")
    assert SystemdWakeAlarm().capability() == (
        "the systemd user manager is version 252.39-1~deb12u2: its timers wake the machine "
        "from systemd 254 on"
    )


def test_a_manager_without_cap_wake_alarm_cannot_wake_the_machine(
    start_manager: Callable[..., Manager],
) -> None:
    manager = start_manager(capable=False)
    why = SystemdWakeAlarm().capability()
    assert why == (
        f"the systemd user manager (pid {manager.child.pid}) lacks CAP_WAKE_ALARM "
        "(user@.service grants it from systemd 254 on)"
    )
    # The next way is taken instead: root here holds the capability for its own timer.
    assert isinstance(linux_wake_alarm({}), TimerfdWakeAlarm)


def test_with_a_capable_manager_the_user_timer_comes_first(
    start_manager: Callable[..., Manager],
) -> None:
    start_manager()
    assert isinstance(linux_wake_alarm({}), SystemdWakeAlarm)


def test_without_a_manager_on_the_bus_it_says_so(start_manager: Callable[..., Manager]) -> None:
    why = SystemdWakeAlarm().capability()
    assert why is not None and why.startswith("no systemd user manager on the session bus: ")
    alarm = SystemdWakeAlarm()
    assert not alarm.arm(datetime.now(UTC) + timedelta(hours=1))
    assert alarm.status.startswith(f"cannot arm {alarm.via}: ")


def test_the_first_arm_stops_the_timers_of_a_dead_instance_not_a_live_one(
    start_manager: Callable[..., Manager],
) -> None:
    manager = start_manager()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    dead, live = (
        f"domi-desktop-wake-{gone.stdout.strip()}-3",
        f"domi-desktop-wake-{manager.child.pid}-1",
    )
    with open_dbus_connection("SESSION") as conn:
        for unit in (dead, live):
            reply = conn.send_and_get_reply(
                new_method_call(
                    DBusAddress(SYSTEMD_PATH, bus_name=SYSTEMD, interface=MANAGER),
                    "StartTransientUnit", "ssa(sv)a(sa(sv))",
                    (f"{unit}.timer", "replace", timer_properties("2030-01-01 00:00:00 UTC"), []),
                ),
                timeout=30,
            )  # fmt: skip
            unwrap_msg(reply)
    alarm = SystemdWakeAlarm()
    assert alarm.arm(datetime.now(UTC) + timedelta(hours=1))
    assert [c["args"] for c in manager.calls("StopUnit")] == [[f"{dead}.timer", "replace"]]
    assert alarm.arm(datetime.now(UTC) + timedelta(hours=2))  # once per app, not every arm
    assert len(manager.calls("ListUnitsByPatterns")) == 1
