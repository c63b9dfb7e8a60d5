"""macOS disks: the mounted volumes under ``/Volumes`` with their names (the label) and their
volume UUIDs (``NSURLVolumeUUIDStringKey``), and ``NSWorkspaceDidMountNotification`` /
``NSWorkspaceDidUnmountNotification`` on the shared workspace's notification center, through
pyobjc: only the workspace's center carries them.

pyobjc exists only on macOS, so it is imported in ``start``/``read`` and this module imports
anywhere; tests pass stand-ins of the center and of the volume listing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

from domi_desktop.model import Volume
from domi_desktop.platform.resume.macos import Notification, NotificationCenter

DID_MOUNT = "NSWorkspaceDidMountNotification"
DID_UNMOUNT = "NSWorkspaceDidUnmountNotification"
VOLUMES = "/Volumes/"

Listing = Callable[[], Iterable[tuple[str, str, str]]]
"""The mounted volumes as (name, UUID, path)."""


def appkit_volumes() -> list[tuple[str, str, str]]:
    foundation = importlib.import_module("Foundation")
    keys = [foundation.NSURLVolumeNameKey, foundation.NSURLVolumeUUIDStringKey]
    manager = foundation.NSFileManager.defaultManager()
    urls = manager.mountedVolumeURLsIncludingResourceValuesForKeys_options_(keys, 0) or []
    found = []
    for url in urls:
        values, _error = url.resourceValuesForKeys_error_(keys, None)
        values = values or {}
        found.append(
            (
                str(values.get(foundation.NSURLVolumeNameKey) or ""),
                str(values.get(foundation.NSURLVolumeUUIDStringKey) or ""),
                str(url.path()),
            )
        )
    return found


class MacVolumeReader:
    def __init__(
        self, listing: Listing = appkit_volumes, center: NotificationCenter | None = None
    ) -> None:
        self.status = "not started"
        self._listing = listing
        self._center = center
        self._observers: list[object] = []
        self._on_change: Callable[[], None] | None = None

    def read(self) -> tuple[Volume, ...]:
        """The volumes a person plugs in (under /Volumes): the system's own are left out."""
        try:
            listed = list(self._listing())
        except (ImportError, OSError, AttributeError) as error:
            self.status = f"cannot list the disks: {error}"
            return ()
        return tuple(
            Volume(name, uuid, path) for name, uuid, path in listed if path.startswith(VOLUMES)
        )

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        center: Any = self._center
        queue: Any = None
        if center is None:
            try:
                appkit = importlib.import_module("AppKit")
            except ImportError as error:
                self.status = f"pyobjc (AppKit) is not installed, so no mount notices: {error}"
                return False
            center = appkit.NSWorkspace.sharedWorkspace().notificationCenter()
            queue = appkit.NSOperationQueue.mainQueue()
        self._center = center
        self._on_change = on_change
        self._observers = [
            center.addObserverForName_object_queue_usingBlock_(name, None, queue, self._notified)
            for name in (DID_MOUNT, DID_UNMOUNT)
        ]
        self.status = "listening to NSWorkspace mount and unmount notifications"
        return True

    def stop(self) -> None:
        if self._center is not None:
            for observer in self._observers:
                self._center.removeObserver_(observer)
        self._observers = []
        self._on_change = None

    def _notified(self, notification: Notification) -> None:
        if str(notification.name()) in (DID_MOUNT, DID_UNMOUNT) and self._on_change is not None:
            self._on_change()
