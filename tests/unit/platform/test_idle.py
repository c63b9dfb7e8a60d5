"""The session's idle time: the first source that answers, inhibitors as presence, read only
while a schedule waits for the user to step away; the X server's own count under Xvfb."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from domi_desktop.model import NetworkState, Presence, Wanted
from domi_desktop.platform.conditions import SystemConditions
from domi_desktop.platform.conditions.base import NetworkReading, PowerReading
from domi_desktop.platform.idle import ChainIdle, StandInIdle, idle_source_for_platform
from domi_desktop.platform.idle import linux as idle_linux
from tests.unit.platform.test_conditions import FakeReader


def broken() -> timedelta:
    raise OSError("not on this desktop")


def test_the_first_source_that_answers_gives_the_idle_time() -> None:
    chain = ChainIdle([("mutter", broken), ("x11", lambda: timedelta(seconds=42))])
    assert chain.read() == Presence(timedelta(seconds=42))
    assert chain.status == "idle time from x11"


def test_no_source_is_an_idle_time_nobody_can_tell() -> None:
    chain = ChainIdle([("mutter", broken)])
    assert chain.read() == Presence(None)
    assert chain.status == "no idle time: mutter: not on this desktop"


def test_an_idle_inhibitor_held_anywhere_is_presence() -> None:
    def no_list() -> bool:
        raise OSError("no session manager")

    chain = ChainIdle(
        [("x11", lambda: timedelta(hours=1))], [("gnome", no_list), ("logind", lambda: True)]
    )
    assert chain.read() == Presence(timedelta(hours=1), presenting=True)


def test_the_idle_time_is_read_only_while_a_schedule_waits_for_an_away() -> None:
    network = FakeReader(NetworkReading(NetworkState.online, False), "qt")
    power = FakeReader(PowerReading(True, None), "upower")
    idle = StandInIdle(timedelta(minutes=5), presenting=True)
    source = SystemConditions(network, power, idle=idle)
    assert source.current().idle is None
    source.want(Wanted(away=True))
    state = source.current()
    assert state.idle == timedelta(minutes=5) and state.presenting
    assert source.status.endswith("; stand-in")


@pytest.mark.parametrize("platform", ["linux", "win32", "darwin"])
def test_every_os_has_its_sources(platform: str) -> None:
    assert idle_source_for_platform(platform).read is not None


@pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("xdotool") is None or not os.environ.get("DISPLAY"),
    reason="needs an X display (xvfb-run) and xdotool",
)
def test_the_x_servers_count_restarts_at_real_input() -> None:
    time.sleep(1.2)
    assert idle_linux.x11_idle() >= timedelta(seconds=1)
    subprocess.run(["xdotool", "mousemove_relative", "--", "5", "5"], check=True, timeout=30)
    assert idle_linux.x11_idle() < timedelta(seconds=1)


@pytest.mark.windows_only
def test_windows_reads_the_last_input_and_the_notification_state() -> None:
    from domi_desktop.platform.idle import windows as idle_windows

    assert idle_windows.last_input_idle() >= timedelta(0)
    assert isinstance(idle_windows.presenting(), bool)
    presence = idle_source_for_platform("win32").read()
    assert presence.idle is not None
