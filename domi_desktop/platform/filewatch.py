"""The database file seen changing: another process's write reaches the app at once, without a
poll (inotify on Linux, FSEvents/kqueue on macOS, ReadDirectoryChangesW on Windows, all through
``QFileSystemWatcher``).

Every write of the app's own connections touches the same files, so a change here only says
"look": the caller asks the store whether another process changed a schedule. Changes are
gathered for ``SETTLE_MS`` first: a burst of writes is one look.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

SETTLE_MS = 300


class FileWatch(QObject):
    touched = Signal()
    """Some of the files changed (once per burst of changes)."""

    def __init__(self, paths: list[Path], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._paths = [str(path) for path in paths]
        self._watcher = QFileSystemWatcher(self)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self._watcher.fileChanged.connect(self._changed)
        # A write-ahead log is removed when the last connection closes and made again by the
        # next: its directory says when it comes back.
        self._watcher.directoryChanged.connect(self._changed)
        self._watch()

    def _watch(self) -> None:
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        wanted = [path for path in self._paths if path not in watched and Path(path).exists()]
        if wanted:
            self._watcher.addPaths(wanted)

    def _changed(self, _path: str) -> None:
        self._watch()
        if not self._settle.isActive():
            self._settle.start()

    def _settled(self) -> None:
        self.touched.emit()

    def close(self) -> None:
        self._settle.stop()
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
