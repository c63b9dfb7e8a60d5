"""The resource half of the machine's state: disks, named networks, paths, each read
and watched only while a schedule's run waits for one or runs with one (``ResourceWatch``)."""

from __future__ import annotations

from collections.abc import Callable

from domi_desktop.model import SystemState, Wanted
from domi_desktop.platform.conditions.base import NameReader, PathReader, VolumeReader


class ResourceReaders:
    def __init__(
        self,
        volumes: VolumeReader | None = None,
        names: NameReader | None = None,
        paths: PathReader | None = None,
    ) -> None:
        self.volumes = volumes
        self.names = names
        self.paths = paths
        self.wanted = Wanted()
        self._on_change: Callable[[], None] | None = None
        self._started: set[str] = set()

    @property
    def status(self) -> str:
        """What the readers in use say; empty while nothing is watched."""
        parts = [
            f"{kind}: {reader.status}"
            for kind, reader in self._readers().items()
            if reader is not None and kind in self._started
        ]
        return "; ".join(parts)

    def _readers(self) -> dict[str, VolumeReader | NameReader | PathReader | None]:
        return {"disks": self.volumes, "network names": self.names, "paths": self.paths}

    def _needed(self) -> dict[str, bool]:
        return {
            "disks": bool(self.wanted.volumes),
            "network names": self.wanted.network_names,
            "paths": bool(self.wanted.paths),
        }

    def want(self, wanted: Wanted) -> None:
        self.wanted = wanted
        if self.paths is not None:
            self.paths.set_paths(wanted.paths)
        if self._on_change is not None:
            self._arrange()

    def read(self, state: SystemState) -> SystemState:
        """``state`` with what is wanted of the resources; the rest is left empty."""
        w = self.wanted
        names = self.names.read() if w.network_names and self.names is not None else frozenset()
        return SystemState(
            network=state.network,
            metered=state.metered,
            on_ac=state.on_ac,
            battery_percent=state.battery_percent,
            volumes=self.volumes.read() if w.volumes and self.volumes is not None else (),
            network_names=names,
            network_names_hidden=bool(w.network_names and self.names and self.names.hidden),
            paths=self.paths.read() if w.paths and self.paths is not None else frozenset(),
        )

    def start(self, on_change: Callable[[], None]) -> bool:
        self._on_change = on_change
        return self._arrange()

    def _arrange(self) -> bool:
        """Each reader started while it is needed, stopped when it is not."""
        ok = True
        needed = self._needed()
        for kind, reader in self._readers().items():
            if reader is None:
                continue
            if needed[kind] and kind not in self._started and self._on_change is not None:
                ok = reader.start(self._on_change) and ok
                self._started.add(kind)
            elif not needed[kind] and kind in self._started:
                reader.stop()
                self._started.discard(kind)
        return ok

    def stop(self) -> None:
        self._on_change = None
        for kind, reader in self._readers().items():
            if reader is not None and kind in self._started:
                reader.stop()
        self._started.clear()
