"""Condition sources: the network and power state the conditions' gate decides on.

One ``SystemConditions`` joins a network reader (Qt's ``QNetworkInformation`` everywhere), a
power reader (UPower on Linux, psutil on macOS and Windows) and the resource readers (disks,
network names, paths: only those a waiting job needs) into a ``ports.ConditionSource``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace

from domi_desktop.model import SystemState, Wanted
from domi_desktop.platform.conditions.base import NetworkReader, PowerReader
from domi_desktop.platform.conditions.resources import ResourceReaders
from domi_desktop.platform.idle import idle_source_for_platform
from domi_desktop.ports import IdleSource


class SystemConditions:
    def __init__(
        self,
        network: NetworkReader,
        power: PowerReader,
        resources: ResourceReaders | None = None,
        idle: IdleSource | None = None,
    ) -> None:
        self.network = network
        self.power = power
        self.resources = resources or ResourceReaders()
        self.idle = idle
        """Read only while a schedule waits for the user to step away (``Wanted.away``)."""
        self._away = False

    @property
    def status(self) -> str:
        idle = self.idle.status if self.idle is not None and self._away else ""
        parts = (self.network.status, self.power.status, self.resources.status, idle)
        return "; ".join(part for part in parts if part)

    def want(self, wanted: Wanted) -> None:
        self.resources.want(wanted)
        self._away = wanted.away

    def current(self) -> SystemState:
        net = self.network.read()
        power = self.power.read()
        state = SystemState(
            network=net.network,
            metered=net.metered,
            on_ac=power.on_ac,
            battery_percent=power.battery_percent,
        )
        state = self.resources.read(state)
        if self._away and self.idle is not None:
            presence = self.idle.read()
            state = replace(state, idle=presence.idle, presenting=presence.presenting)
        return state

    def start(self, on_change: Callable[[], None]) -> bool:
        network = self.network.start(on_change)
        power = self.power.start(on_change)
        resources = self.resources.start(on_change)
        return network and power and resources

    def stop(self) -> None:
        self.network.stop()
        self.power.stop()
        self.resources.stop()


def condition_source_for_platform(platform: str = sys.platform) -> SystemConditions:
    from domi_desktop.platform.conditions.network import QtNetworkReader

    power: PowerReader
    if platform.startswith("linux"):
        from domi_desktop.platform.conditions.upower import UPowerReader

        power = UPowerReader()
    else:
        from domi_desktop.platform.conditions.battery import PsutilPowerReader

        power = PsutilPowerReader()
    return SystemConditions(
        QtNetworkReader(),
        power,
        resource_readers_for_platform(platform),
        idle_source_for_platform(platform),
    )


def resource_readers_for_platform(platform: str = sys.platform) -> ResourceReaders:
    from domi_desktop.platform.conditions.paths import PathWatcher

    if platform.startswith("linux"):
        from domi_desktop.platform.conditions.nmnames import NetworkManagerNames
        from domi_desktop.platform.conditions.udisks import UDisks2Reader

        return ResourceReaders(UDisks2Reader(), NetworkManagerNames(), PathWatcher())
    if platform == "win32":
        from domi_desktop.platform.conditions.wifinames import WifiNames
        from domi_desktop.platform.conditions.winvolumes import WindowsVolumeReader
        from domi_desktop.platform.conditions.winwlan import WlanNames

        names = WifiNames(WlanNames())
        return ResourceReaders(WindowsVolumeReader(), names, PathWatcher())
    if platform == "darwin":
        from domi_desktop.platform.conditions.macvolumes import MacVolumeReader
        from domi_desktop.platform.conditions.macwifi import CoreWlanNames
        from domi_desktop.platform.conditions.wifinames import WifiNames

        return ResourceReaders(MacVolumeReader(), WifiNames(CoreWlanNames()), PathWatcher())
    return ResourceReaders(None, None, PathWatcher())
