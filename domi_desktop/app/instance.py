"""One instance per user and data dir: a lock file decides who is primary; the primary listens.

The lock lives next to the database; the socket in the per-user runtime dir (short paths: a Unix
socket path is limited to ~104 bytes), named after a hash of the data dir, so two data dirs (tests,
a second profile) never meet. A stale socket left by a crash is removed only once the lock is held.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path

LOCK_NAME = "domi-desktop.lock"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR`` when set, else a private dir under the temp dir (mode 0700, ours)."""
    env = os.environ.get("XDG_RUNTIME_DIR")
    if env and os.path.isabs(env) and os.path.isdir(env):
        return Path(env)
    path = Path(tempfile.gettempdir()) / f"domi-desktop-{_user()}"
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise OSError(f"{path} is not a private directory of this user; remove it")
    if info.st_mode & 0o077:
        path.chmod(0o700)
    return path


def socket_name(data_dir: Path) -> str:
    """What ``QLocalServer.listen``/``QLocalSocket.connectToServer`` take for this data dir."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    if sys.platform == "win32":
        return f"domi-desktop-{_user()}-{digest}"
    return str(runtime_dir() / f"domi-{digest}.sock")


def lock_path(data_dir: Path) -> Path:
    return data_dir / LOCK_NAME
