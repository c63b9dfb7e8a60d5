"""The psutil power reader and the joined condition source, against fakes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from domi_desktop.model import NetworkState, SystemState
from domi_desktop.platform.conditions import SystemConditions, condition_source_for_platform
from domi_desktop.platform.conditions.base import NetworkReading, PowerReading
from domi_desktop.platform.conditions.battery import (
    POLL_MS,
    PsutilPowerReader,
    psutil_battery,
    reading_of,
)
from domi_desktop.platform.conditions.network import QtNetworkReader


class Battery(NamedTuple):
    """psutil's sbattery."""

    percent: float
    secsleft: int
    power_plugged: bool | None


POWER_TIME_UNLIMITED = -2  # psutil.POWER_TIME_UNLIMITED
POWER_TIME_UNKNOWN = -1


@pytest.mark.parametrize(
    ("battery", "reading"),
    [
        (None, PowerReading(on_ac=True, battery_percent=None)),
        (Battery(35.4, 5400, False), PowerReading(on_ac=False, battery_percent=35)),
        (Battery(99.6, POWER_TIME_UNLIMITED, True), PowerReading(on_ac=True, battery_percent=100)),
        (Battery(50.0, 3600, None), PowerReading(on_ac=False, battery_percent=50)),
        (Battery(50.0, POWER_TIME_UNKNOWN, None), PowerReading(on_ac=True, battery_percent=50)),
    ],
)
def test_it_reads_psutils_battery(battery: Battery | None, reading: PowerReading) -> None:
    assert reading_of(battery) == reading


def test_this_machine_s_battery_reads_without_error() -> None:
    reading_of(psutil_battery())


class FakeSensors:
    def __init__(self, battery: Battery | None) -> None:
        self.battery = battery
        self.error: Exception | None = None

    def __call__(self) -> Battery | None:
        if self.error is not None:
            raise self.error
        return self.battery


def test_a_poll_reports_a_change_and_only_a_change(qtbot: QtBot) -> None:
    sensors = FakeSensors(Battery(60, 3600, False))
    reader = PsutilPowerReader(sensors)
    changes: list[PowerReading] = []
    assert reader.start(lambda: changes.append(reader.read()))
    assert reader.status == "reading the battery through psutil every 2 s"
    qtbot.wait(POLL_MS + 300)
    assert changes == []
    sensors.battery = Battery(61, POWER_TIME_UNLIMITED, True)
    qtbot.waitUntil(lambda: bool(changes), timeout=60_000)  # the next poll, on a loaded machine
    assert changes == [PowerReading(on_ac=True, battery_percent=61)]
    reader.stop()
    sensors.battery = None
    qtbot.wait(POLL_MS + 300)
    assert len(changes) == 1


def test_a_battery_that_cannot_be_read_counts_as_mains(qapp: QCoreApplication) -> None:
    sensors = FakeSensors(None)
    sensors.error = RuntimeError("couldn't get battery info")
    reader = PsutilPowerReader(sensors)
    assert reader.read() == PowerReading()
    assert (
        reader.status == "cannot read the battery (couldn't get battery info); counted as on mains"
    )


class FakeReader:
    def __init__(self, reading: Any, status: str, starts: bool = True) -> None:
        self.reading = reading
        self.status = status
        self.starts = starts
        self.on_change: Callable[[], None] | None = None

    def read(self) -> Any:
        return self.reading

    def start(self, on_change: Callable[[], None]) -> bool:
        self.on_change = on_change
        return self.starts

    def stop(self) -> None:
        self.on_change = None


def test_the_source_joins_network_and_power() -> None:
    network = FakeReader(NetworkReading(NetworkState.portal, True), "qt")
    power = FakeReader(PowerReading(False, 20), "upower", starts=False)
    source = SystemConditions(network, power)
    assert source.current() == SystemState(NetworkState.portal, True, False, 20)
    assert source.status == "qt; upower"
    woken: list[str] = []
    assert source.start(lambda: woken.append("wake")) is False  # one half has no signal
    assert network.on_change is not None and power.on_change is not None
    network.on_change()
    assert woken == ["wake"]
    source.stop()
    assert network.on_change is None and power.on_change is None


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_macos_and_windows_read_power_from_psutil(qapp: QCoreApplication, platform: str) -> None:
    source = condition_source_for_platform(platform)
    assert isinstance(source.power, PsutilPowerReader)
    assert isinstance(source.network, QtNetworkReader)
