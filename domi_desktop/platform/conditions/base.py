"""The two halves of the machine's state, read separately and joined into one ``SystemState``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from domi_desktop.model import NetworkState, Volume


@dataclass(frozen=True, slots=True)
class NetworkReading:
    network: NetworkState = NetworkState.unknown
    metered: bool | None = None


@dataclass(frozen=True, slots=True)
class PowerReading:
    on_ac: bool = True
    battery_percent: int | None = None


class NetworkReader(Protocol):
    status: str

    def read(self) -> NetworkReading: ...

    def start(self, on_change: Callable[[], None]) -> bool: ...

    def stop(self) -> None: ...


class PowerReader(Protocol):
    status: str

    def read(self) -> PowerReading: ...

    def start(self, on_change: Callable[[], None]) -> bool: ...

    def stop(self) -> None: ...


class VolumeReader(Protocol):
    status: str

    def read(self) -> tuple[Volume, ...]: ...

    def start(self, on_change: Callable[[], None]) -> bool: ...

    def stop(self) -> None: ...


class NameReader(Protocol):
    """The Wi-Fi names the machine is on, and ``ethernet`` when it is wired."""

    status: str
    hidden: bool
    """After a read: the OS kept the Wi-Fi names from the app (macOS without Location Services)."""

    def read(self) -> frozenset[str]: ...

    def start(self, on_change: Callable[[], None]) -> bool: ...

    def stop(self) -> None: ...


class PathReader(Protocol):
    status: str

    def set_paths(self, paths: frozenset[str]) -> None: ...

    def read(self) -> frozenset[str]: ...

    def start(self, on_change: Callable[[], None]) -> bool: ...

    def stop(self) -> None: ...
