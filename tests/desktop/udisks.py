"""A handle on the fake UDisks2 (fake_udisks2.py), beside the other system fakes."""

from __future__ import annotations

from pathlib import Path

from tests.desktop.harness import HERE, _FakeService

FAKE_UDISKS2 = HERE / "fake_udisks2.py"


class FakeUDisks2(_FakeService):
    """Disks by a short name (``sdb1``): plugged, mounted, unmounted, pulled. Each call returns
    the monotonic time its signal was sent."""

    bus_name = "org.freedesktop.UDisks2"

    def plug(self, name: str, label: str, uuid: str) -> float:
        return float(self.control("Plug", "sss", name, label, uuid))

    def mount(self, name: str, where: str | Path) -> float:
        return float(self.control("Mount", "ss", name, str(where)))

    def unmount(self, name: str) -> float:
        return float(self.control("Unmount", "s", name))

    def unplug(self, name: str) -> float:
        return float(self.control("Unplug", "s", name))
