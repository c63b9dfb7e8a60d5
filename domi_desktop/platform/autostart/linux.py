"""Linux and other XDG desktops: ``$XDG_CONFIG_HOME/autostart/domi-desktop.desktop``.

The file carries our marker (``X-Domi-Desktop``); a file without it was written by the user or a
distribution package, so it is reported, never overwritten or deleted behind the user's back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from domi_desktop.platform.autostart.base import (
    APP_NAME,
    MARKER_KEY,
    checked,
    foreign,
    read_text,
    remove,
    write_atomically,
)

# The Desktop Entry spec's reserved characters: an argument holding any of them must be quoted.
# Plus CR: quoting it is harmless and spares readers that split on any whitespace.
_EXEC_RESERVED = frozenset(" \t\n\r\"'\\><~|&;$*?#()`")
_EXEC_ESCAPED_IN_QUOTES = re.compile(r'(["`$\\])')


def xdg_config_home(home: Path, env: Mapping[str, str]) -> Path:
    # The XDG Base Directory spec says a relative $XDG_CONFIG_HOME is invalid and must be ignored.
    configured = env.get("XDG_CONFIG_HOME", "")
    if configured and Path(configured).is_absolute():
        return Path(configured)
    return home / ".config"


def desktop_exec(command: Sequence[str]) -> str:
    """The ``Exec=`` value that runs ``command``, by the Desktop Entry spec's quoting rules.

    Two layers, as the spec says: each argument is quoted for the Exec parser (``%`` doubled as it
    would start a field code), then the whole value is escaped as a string value (``\\`` → ``\\\\``,
    newline → ``\\n``...), which readers undo first. So a literal backslash in a quoted argument
    ends up as four backslashes in the file.
    """
    return _escape_string_value(" ".join(_quote_exec_argument(arg) for arg in command))


def _quote_exec_argument(argument: str) -> str:
    argument = argument.replace("%", "%%")
    if argument and not _EXEC_RESERVED.intersection(argument):
        return argument
    return '"' + _EXEC_ESCAPED_IN_QUOTES.sub(r"\\\1", argument) + '"'


def _escape_string_value(value: str) -> str:
    return (
        value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    )


def _desktop_entry(command: Sequence[str]) -> str:
    """The text of our autostart file."""
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        f"Name={APP_NAME}",
        "Comment=Runs your recurring jobs on cron schedules",
        f"Exec={desktop_exec(command)}",
        # A session skips the entry once the program is gone (the bundle deleted, the .deb purged)
        # instead of failing to start it at every login.
        f"TryExec={_escape_string_value(command[0])}",
        f"Icon={APP_NAME}",
        "Terminal=false",
        "Categories=Utility;",
        "X-GNOME-Autostart-enabled=true",
        # Let the panel and its tray host come up first, so the icon has a tray to sit in.
        "X-GNOME-Autostart-Delay=5",
        f"{MARKER_KEY}=1",
    ]
    return "\n".join(lines) + "\n"


def _desktop_entry_values(text: str) -> dict[str, str]:
    """The keys of the ``[Desktop Entry]`` group; tolerant of whatever else a hand-written file holds."""
    values: dict[str, str] = {}
    group = ""
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            group = line
        elif group == "[Desktop Entry]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            values.setdefault(key.strip(), value.strip())
    return values


class XdgAutostart:
    """``$XDG_CONFIG_HOME/autostart/domi-desktop.desktop``, per the XDG Autostart spec."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def enable(self, command: Sequence[str]) -> None:
        text = _desktop_entry(checked(command))
        self._refuse_foreign("replace")
        write_atomically(self.path, text.encode("utf-8"))

    def disable(self) -> None:
        self._refuse_foreign("remove")
        remove(self.path)

    def is_enabled(self) -> bool:
        values = self._values()
        if values is None:
            return False
        # How the XDG spec (Hidden) and GNOME's Startup Applications switch an entry off in place.
        return (
            values.get("Hidden", "").lower() != "true"
            and values.get("X-GNOME-Autostart-enabled", "").lower() != "false"
        )

    def describe(self) -> str:
        return str(self.path)

    def _values(self) -> dict[str, str] | None:
        text = read_text(self.path)
        return None if text is None else _desktop_entry_values(text)

    def _refuse_foreign(self, verb: str) -> None:
        values = self._values()
        if values is not None and values.get(MARKER_KEY) != "1":
            raise foreign(self.path, verb)
