"""UPower on the private system bus, read by the Linux power reader (in process: it opens its own
connection to $DBUS_SYSTEM_BUS_ADDRESS)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from domi_desktop.model import Conditions, NetworkState, SystemState
from domi_desktop.platform.conditions import SystemConditions, condition_source_for_platform
from domi_desktop.platform.conditions.base import NetworkReading, PowerReading
from domi_desktop.platform.conditions.upower import UPowerReader
from domi_desktop.scheduler.conditions import Verdict, gate, lost
from tests.desktop.harness import FakeUPower

pytestmark = pytest.mark.gui

WAIT_MS = 60_000
"""A generous deadline (loaded machines): a change comes by UPower's signal, which the reader says
it listens to; how fast is not this test's business."""


def test_it_reads_mains_and_the_battery_charge(
    fake_upower: FakeUPower, qapp: QCoreApplication
) -> None:
    reader = UPowerReader()
    assert reader.read() == PowerReading(on_ac=True, battery_percent=80)
    fake_upower.update(on_battery=True, percentage=35)
    assert reader.read() == PowerReading(on_ac=False, battery_percent=35)


def test_a_change_is_reported_by_the_signal(fake_upower: FakeUPower, qtbot: QtBot) -> None:
    reader = UPowerReader()
    changes: list[float] = []
    assert reader.start(lambda: changes.append(time.monotonic()))
    assert reader.status == "listening to UPower"
    fake_upower.update(on_battery=True, percentage=35)
    qtbot.waitUntil(lambda: bool(changes), timeout=WAIT_MS)
    assert reader.read() == PowerReading(on_ac=False, battery_percent=35)

    reader.stop()
    count = len(changes)
    fake_upower.update(on_battery=False)
    qtbot.wait(300)
    assert len(changes) == count


def test_a_machine_without_a_battery_is_on_mains(
    fake_upower: FakeUPower, qapp: QCoreApplication
) -> None:
    fake_upower.update(battery=False)
    assert UPowerReader().read() == PowerReading(on_ac=True, battery_percent=None)


def test_without_upower_the_machine_counts_as_on_mains(
    system_bus: str, qapp: QCoreApplication
) -> None:
    assert UPowerReader().read() == PowerReading()


class OnlineNetwork:
    """The network half, fixed: Qt's network information would bind this process's system bus."""

    status = "online"

    def read(self) -> NetworkReading:
        return NetworkReading(NetworkState.online, metered=False)

    def start(self, on_change: Callable[[], None]) -> bool:
        return True

    def stop(self) -> None:
        pass


def test_linux_reads_power_from_upower() -> None:
    assert isinstance(condition_source_for_platform("linux").power, UPowerReader)


def test_the_charger_gate_opens_when_the_charger_returns(
    fake_upower: FakeUPower, qtbot: QtBot
) -> None:
    source = SystemConditions(OnlineNetwork(), UPowerReader())
    due = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    waits_for_charger = Conditions(on_ac_power=True, stop_if_lost=True)
    fake_upower.update(on_battery=True, percentage=60)
    state = source.current()
    assert gate(waits_for_charger, "command", state, due, due, None).reason == (
        "waiting for the charger"
    )
    woken: list[float] = []
    source.start(lambda: woken.append(time.monotonic()))
    fake_upower.update(on_battery=False)
    qtbot.waitUntil(lambda: bool(woken), timeout=WAIT_MS)
    at_start = source.current()
    assert at_start == SystemState(NetworkState.online, False, on_ac=True, battery_percent=60)
    assert gate(waits_for_charger, "command", at_start, due, due, None).verdict is Verdict.run
    # Unplugged mid-run: the next change says stop, and why.
    woken.clear()
    fake_upower.update(on_battery=True)
    qtbot.waitUntil(lambda: bool(woken), timeout=WAIT_MS)
    assert lost(waits_for_charger, "command", source.current(), at_start=at_start) == (
        "stopped: the charger was unplugged"
    )
    source.stop()
