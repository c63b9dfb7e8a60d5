"""The data dir's instance lock: the one app (tray or headless) that runs its schedules holds it.

Taken first, before the engine is imported or built: a second launch starts no thread and opens
no connection (none that could keep it from exiting); it finds the first and asks it to show its
window. The tray app, once it holds the lock, shows its icon before loading the rest.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QLockFile

from domi_desktop.errors import StoreError
from domi_desktop.frontdoor.rpc.instance import lock_path
from domi_desktop.paths import ensure_private_dir

TYPE_CHECKING = False  # typing's import is not wanted before the tray icon shows
if TYPE_CHECKING:
    from domi_desktop.frontdoor.rpc.client import RpcClient

TRY_FOR_MS = 200
"""How long a second launch waits for the lock (the first may be letting it go as it quits)."""


class AlreadyRunning(Exception):
    """Another instance holds the lock for this data dir."""


class PrimaryLock:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock = QLockFile(str(lock_path(data_dir)))
        self._lock.setStaleLockTime(0)  # stale only when its process is gone

    @property
    def held(self) -> bool:
        return self._lock.isLocked()

    def take(self) -> None:
        """Become the primary instance, or raise ``AlreadyRunning``; ``StoreError`` when the
        lock file cannot be made (the data dir is created here on a first start)."""
        path = lock_path(self.data_dir)
        try:
            ensure_private_dir(self.data_dir)
        except OSError as error:
            raise StoreError(f"cannot create the data folder {self.data_dir}: {error}") from None
        if self._lock.tryLock(TRY_FOR_MS):
            return
        if self._lock.error() == QLockFile.LockError.LockFailedError:
            raise AlreadyRunning(str(path))
        raise StoreError(f"cannot create the lock file {path} ({self._lock.error().name})")

    def release(self) -> None:
        self._lock.unlock()


def wait_for_primary(data_dir: Path, timeout: float = 5.0) -> RpcClient | None:
    """The primary's client; it may still be starting, so retry for a while."""
    from domi_desktop.frontdoor.rpc.client import connect_to_app

    deadline = time.monotonic() + timeout
    while True:
        client = connect_to_app(data_dir)
        if client is not None or time.monotonic() > deadline:
            return client
        time.sleep(0.1)
