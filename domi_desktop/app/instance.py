"""One instance per user and data dir: a lock file decides who is primary; the primary listens.

The lock lives next to the database; the socket in a short private directory (``socket_path``; a
Unix socket path is limited to ~104 bytes) or, on Windows, is a named pipe; either is named after a
hash of the data dir, so two data dirs (tests, a second profile) never meet. A stale socket left
by a crash is removed only once the lock is held.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import sys
from pathlib import Path

LOCK_NAME = "domi-desktop.lock"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def socket_name(data_dir: Path) -> str:
    """What ``QLocalServer.listen``/``QLocalSocket.connectToServer`` take for this data dir."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    if sys.platform == "win32":
        return f"domi-desktop-{_user()}-{digest}"
    from domi_desktop.app.socket_path import socket_dir

    return str(socket_dir() / f"domi-{digest}.sock")


def lock_path(data_dir: Path) -> Path:
    return data_dir / LOCK_NAME
