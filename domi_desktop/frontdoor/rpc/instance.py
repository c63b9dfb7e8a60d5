"""One instance per user and data dir: a lock file decides who is primary; the primary listens.

The lock lives next to the database; the socket in a short private directory (``socket_path``; a
Unix socket path is limited to ~104 bytes) or, on Windows, is a named pipe; either is named after a
hash of the data dir, so two data dirs (tests, a second profile) never meet. A stale socket left
by a crash is removed only once the lock is held.

``hashlib`` (OpenSSL) and ``getpass`` are imported where used: ``domi-desktop status`` with no app
running asks ``app_socket`` first and often needs neither.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

LOCK_NAME = "domi-desktop.lock"
SOCKET_PREFIX = "domi-"
SOCKET_SUFFIX = ".sock"


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def socket_name(data_dir: Path) -> str:
    """What ``QLocalServer.listen``/``QLocalSocket.connectToServer`` take for this data dir."""
    import hashlib

    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    if sys.platform == "win32":
        return f"domi-desktop-{_user()}-{digest}"
    from domi_desktop.frontdoor.rpc.socket_path import socket_dir

    return str(socket_dir() / f"{SOCKET_PREFIX}{digest}{SOCKET_SUFFIX}")


def app_socket(data_dir: Path) -> str | None:
    """The app's socket for ``data_dir`` if it exists (on Windows: the pipe name, not checked
    here), else None: no app listens. Raises ``SocketDirError`` when the directory is refused.

    The common answer, no socket of ours at all, comes from one directory listing, before the
    data dir is hashed (``hashlib`` loads OpenSSL: 2 ms of ``domi-desktop status``).
    """
    if sys.platform == "win32":
        return socket_name(data_dir)
    from domi_desktop.frontdoor.rpc.socket_path import socket_dir

    try:
        names = os.listdir(socket_dir())
    except OSError:
        names = None  # cannot list it: the exact name below is the answer
    if names is not None and not any(
        name.startswith(SOCKET_PREFIX) and name.endswith(SOCKET_SUFFIX) for name in names
    ):
        return None
    name = socket_name(data_dir)
    return name if os.path.exists(name) else None


def lock_path(data_dir: Path) -> Path:
    return data_dir / LOCK_NAME
