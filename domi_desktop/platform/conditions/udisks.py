"""Linux disks: UDisks2 on the system bus.

The mounted filesystems are the objects of UDisks2's ObjectManager that carry both
``org.freedesktop.UDisks2.Block`` (``IdLabel``, ``IdUUID``) and
``org.freedesktop.UDisks2.Filesystem`` with ``MountPoints`` (NUL-terminated byte strings). A disk
plugged or pulled is ``InterfacesAdded``/``InterfacesRemoved`` there; a mount or an unmount is
``PropertiesChanged`` of ``MountPoints`` on the disk's object. Watched only while started, which
the source does only while a job waits for a disk (or runs on one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domi_desktop.model import Volume
from domi_desktop.platform.dbus import PROPERTIES, BusCaller, BusError, SignalWatch

UDISKS = "org.freedesktop.UDisks2"
UDISKS_PATH = "/org/freedesktop/UDisks2"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
BLOCK = "org.freedesktop.UDisks2.Block"
FILESYSTEM = "org.freedesktop.UDisks2.Filesystem"

RULES = (
    {"sender": UDISKS, "interface": OBJECT_MANAGER, "path": UDISKS_PATH},
    {"sender": UDISKS, "interface": PROPERTIES, "path_namespace": UDISKS_PATH},
)


def _value(props: Mapping[str, Any], name: str) -> Any:
    found = props.get(name)
    return found[1] if isinstance(found, tuple) and len(found) == 2 else None


def _path(raw: Any) -> str:
    if not isinstance(raw, bytes | bytearray | list):
        return ""
    return bytes(raw).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def volumes_of(objects: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> tuple[Volume, ...]:
    """The mounted filesystems of a ``GetManagedObjects`` answer, sorted by mount point."""
    found: list[Volume] = []
    for interfaces in objects.values():
        block, filesystem = interfaces.get(BLOCK), interfaces.get(FILESYSTEM)
        if block is None or filesystem is None:
            continue
        points = _value(filesystem, "MountPoints") or []
        label = _value(block, "IdLabel")
        uuid = _value(block, "IdUUID")
        for point in points:
            where = _path(point)
            if where:
                found.append(Volume(label if isinstance(label, str) else "", uuid or "", where))
    return tuple(sorted(found, key=lambda v: v.mount_point))


class UDisks2Reader:
    def __init__(self) -> None:
        self.status = "not started"
        self._watch: SignalWatch | None = None

    def read(self) -> tuple[Volume, ...]:
        try:
            with BusCaller() as bus:
                (objects,) = bus.call(UDISKS, UDISKS_PATH, OBJECT_MANAGER, "GetManagedObjects")
        except BusError as error:
            self.status = f"cannot list the disks: {error}"
            return ()
        return volumes_of(objects)

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        try:
            self._watch = SignalWatch(RULES, lambda _signal: on_change())
        except BusError as error:
            self.status = f"cannot watch the disks: {error}"
            return False
        self.status = "watching UDisks2"
        return True

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
        self._watch = None
