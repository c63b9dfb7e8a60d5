"""Condition sources: the network and power state the conditions' gate decides on.

One ``SystemConditions`` joins a network reader (Qt's ``QNetworkInformation`` everywhere) and a
power reader (UPower on Linux, psutil on macOS and Windows) into a ``ports.ConditionSource``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from domi_desktop.model import SystemState
from domi_desktop.platform.conditions.base import NetworkReader, PowerReader


class SystemConditions:
    def __init__(self, network: NetworkReader, power: PowerReader) -> None:
        self.network = network
        self.power = power

    @property
    def status(self) -> str:
        return f"{self.network.status}; {self.power.status}"

    def current(self) -> SystemState:
        net = self.network.read()
        power = self.power.read()
        return SystemState(
            network=net.network,
            metered=net.metered,
            on_ac=power.on_ac,
            battery_percent=power.battery_percent,
        )

    def start(self, on_change: Callable[[], None]) -> bool:
        network = self.network.start(on_change)
        power = self.power.start(on_change)
        return network and power

    def stop(self) -> None:
        self.network.stop()
        self.power.stop()


def condition_source_for_platform(platform: str = sys.platform) -> SystemConditions:
    from domi_desktop.platform.conditions.network import QtNetworkReader

    power: PowerReader
    if platform.startswith("linux"):
        from domi_desktop.platform.conditions.upower import UPowerReader

        power = UPowerReader()
    else:
        from domi_desktop.platform.conditions.battery import PsutilPowerReader

        power = PsutilPowerReader()
    return SystemConditions(QtNetworkReader(), power)
