"""What every login-entry backend shares: names, the error, the command check and file writing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from domi_desktop.errors import DomiError

APP_NAME = "domi-desktop"
MARKER_KEY = "X-Domi-Desktop"


class AutostartError(DomiError):
    """The login entry cannot be written or removed (someone else's file, unwritable folder...)."""


def checked(command: Sequence[str]) -> list[str]:
    if isinstance(command, str):
        # A str is a Sequence[str] too: it would become one argument per character.
        raise TypeError("pass the command as a list of arguments, not one string")
    argv = list(command)
    if not argv or not argv[0]:
        raise AutostartError("the command to start at login is empty")
    return argv


def foreign(path: Path, verb: str) -> AutostartError:
    return AutostartError(
        f"{path} was not written by domi-desktop, so it was left alone; "
        f"{verb} it yourself if it should go"
    )


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise AutostartError(f"cannot read {path}: {error.strerror}") from error


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` in one step: a session starting meanwhile sees the old file or the new one."""
    temporary: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A dot name without the .desktop/.plist suffix: neither autostart nor launchd picks it up.
        with tempfile.NamedTemporaryFile(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
        ) as file:
            temporary = Path(file.name)
            file.write(data)
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise AutostartError(f"cannot write {path}: {error.strerror or error}") from error


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise AutostartError(f"cannot remove {path}: {error.strerror}") from error
