"""Where the app's Unix socket lives: a short, private directory every process of the user sees.

Not ``$TMPDIR``: on macOS it is ``/var/folders/xx/<28 chars>/T/`` (49 bytes), which with a
per-user directory and the socket name came to 85 bytes plus the user name against ``sun_path``'s
103, and launchd-started and Terminal-started processes can be given different ones, so the app
and the CLI would not meet. ``/tmp/domi-<uid>`` is at most 21 bytes on every Unix (44 with the
socket name) and the same for every process of the user. On Linux ``$XDG_RUNTIME_DIR`` (made by
logind for the session user, 0700) is preferred when set.

The directory must be a real directory (not a link), owned by us, mode 0700: anything else may be
another user's trap, and is refused rather than repaired.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from domi_desktop.errors import DomiError

SHARED_TMP = Path("/tmp")
"""Shared by all users, so what we use in it is our own 0700 directory, checked."""


class SocketDirError(DomiError):
    """The socket directory is not private to this user."""


def choose_socket_dir(platform: str, uid: int, xdg_runtime_dir: str | None) -> Path:
    """The directory for ``platform`` (a ``sys.platform`` value) and user ``uid``."""
    if platform.startswith("linux") and xdg_runtime_dir and os.path.isabs(xdg_runtime_dir):
        return Path(xdg_runtime_dir)
    return SHARED_TMP / f"domi-{uid}"


def private_dir(path: Path, uid: int, *, create: bool) -> Path:
    """``path``, checked (and created when ``create``) as a 0700 directory owned by ``uid``."""
    if create:
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise SocketDirError(f"cannot create the socket directory {path}: {error}") from None
    try:
        info = path.lstat()
    except OSError as error:
        raise SocketDirError(f"the socket directory {path} is unusable: {error}") from None
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "it is not a directory (a link or a file)"
    elif info.st_uid != uid:
        problem = f"it belongs to uid {info.st_uid}, not to you (uid {uid})"
    elif stat.S_IMODE(info.st_mode) != 0o700:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):o}, not 700"
    if problem:
        raise SocketDirError(f"refusing the socket directory {path}: {problem}; remove it")
    return path


def socket_dir() -> Path:
    """This process's socket directory, created if needed; raises ``SocketDirError``."""
    if sys.platform == "win32":
        raise SocketDirError("Windows uses a named pipe, not a socket directory")
    uid = os.getuid()
    path = choose_socket_dir(sys.platform, uid, os.environ.get("XDG_RUNTIME_DIR"))
    return private_dir(path, uid, create=path.parent == SHARED_TMP)


def recreate_socket_dir(path: Path) -> None:
    """Make ``path`` again, private, if it was one of ours in ``/tmp`` and is gone: macOS's
    periodic cleaner removes what in ``/tmp`` was left untouched for three days, socket directory
    included, and the app would then listen nowhere."""
    if sys.platform == "win32":
        return  # named pipes live in no directory
    if path.parent == SHARED_TMP and not path.exists():
        private_dir(path, os.getuid(), create=True)
