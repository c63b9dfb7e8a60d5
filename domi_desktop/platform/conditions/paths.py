"""Paths that must exist, watched with ``QFileSystemWatcher`` on their nearest existing parent.

A path that does not exist cannot be watched; the closest directory above it that does can, and
each change there moves the watch down as the directories appear (or up as they go). A share or a
disk mounted on a directory changes nothing inotify sees, so on Linux the mount table is watched
too: ``/proc/self/mounts`` reports each mount and unmount as an exceptional condition (POLLPRI),
which ``QSocketNotifier``'s ``Exception`` type is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable

from PySide6.QtCore import QFileSystemWatcher, QObject, QSocketNotifier

MOUNTS = "/proc/self/mounts"


def nearest_existing(path: str) -> str | None:
    """``path`` itself when it exists, else the closest directory above it that does."""
    current = os.path.abspath(path)
    while True:
        if os.path.exists(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def watch_points(paths: Iterable[str]) -> set[str]:
    """What to watch for ``paths``: each one's nearest existing ancestor, and its parent (a
    path that exists is watched where it can disappear from)."""
    found: set[str] = set()
    for path in paths:
        near = nearest_existing(path)
        if near is None:
            continue
        found.add(near)
        parent = os.path.dirname(near)
        if near == os.path.abspath(path) and parent != near:
            found.add(parent)
    return found


class PathWatcher(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status = "not started"
        self.paths: frozenset[str] = frozenset()
        self._watcher: QFileSystemWatcher | None = None
        self._mounts: tuple[int, QSocketNotifier] | None = None
        self._on_change: Callable[[], None] | None = None

    def set_paths(self, paths: frozenset[str]) -> None:
        self.paths = paths
        if self._watcher is not None:
            self._rearm()

    def read(self) -> frozenset[str]:
        return frozenset(path for path in self.paths if os.path.exists(path))

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        self._on_change = on_change
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._changed)
        self._watcher.fileChanged.connect(self._changed)
        self._rearm()
        self._watch_mounts()
        self.status = "watching " + (", ".join(sorted(self.paths)) or "no path")
        return True

    def _watch_mounts(self) -> None:
        if sys.platform != "linux":  # the mount table that says so is Linux's
            return
        try:
            fd = os.open(MOUNTS, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        notifier = QSocketNotifier(fd, QSocketNotifier.Type.Exception, self)
        notifier.activated.connect(self._mounted)
        self._mounts = (fd, notifier)

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.deleteLater()
        self._watcher = None
        if self._mounts is not None:
            fd, notifier = self._mounts
            notifier.setEnabled(False)
            notifier.deleteLater()
            os.close(fd)
        self._mounts = None
        self._on_change = None

    def _rearm(self) -> None:
        if self._watcher is None:
            return
        wanted = watch_points(self.paths)
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        if watched - wanted:
            self._watcher.removePaths(sorted(watched - wanted))
        if wanted - watched:
            self._watcher.addPaths(sorted(wanted - watched))

    def _mounted(self) -> None:
        if self._mounts is not None:
            # The table must be read to the end, else the same change is reported again.
            fd = self._mounts[0]
            os.lseek(fd, 0, os.SEEK_SET)
            while os.read(fd, 65536):
                pass
        self._changed()

    def _changed(self, *_: object) -> None:
        self._rearm()
        if self._on_change is not None:
            self._on_change()
