"""Start at login: an XDG autostart file (Linux and other Unix desktops), a LaunchAgent (macOS), a
value under the HKCU Run key (Windows). Written and removed by code, one backend per OS.

A file carries our marker (``X-Domi-Desktop``); a file without it was written by the user or a
distribution package, so it is reported, never overwritten or deleted behind the user's back.
"""

from __future__ import annotations

import os
import plistlib
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from domi_desktop.errors import DomiError
from domi_desktop.ports import Autostart

APP_NAME = "domi-desktop"
MARKER_KEY = "X-Domi-Desktop"
LAUNCH_AGENT_LABEL = "org.domi.desktop"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


class AutostartError(DomiError):
    """The login entry cannot be written or removed (someone else's file, unwritable folder...)."""


class RegistryLike(Protocol):
    """String values of one registry key; ``get`` of a missing value is ``None``, ``delete`` too is fine."""

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> None: ...


def default_command() -> list[str]:
    """The command that starts this very installation of domi-desktop."""
    if getattr(sys, "frozen", False):
        # A PyInstaller bundle: its executable is the app and takes no module argument.
        return [sys.executable]
    return [gui_interpreter(sys.executable), "-m", "domi_desktop"]


def gui_interpreter(executable: str, platform: str = sys.platform) -> str:
    """On Windows, ``pythonw.exe`` next to ``python.exe``: else a console window opens at every login."""
    path = Path(executable)
    if platform == "win32" and path.name.lower() == "python.exe":
        windowless = path.with_name("pythonw.exe")
        if windowless.is_file():
            return str(windowless)
    return executable


def autostart_for_platform(
    platform: str = sys.platform,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryLike | None = None,
) -> Autostart:
    """The backend of ``platform``; ``home``, ``env`` and ``registry`` default to the real ones."""
    if platform == "win32":
        return RunKeyAutostart(registry if registry is not None else _user_run_key())
    home = Path.home() if home is None else home
    if platform == "darwin":
        agents = home / "Library" / "LaunchAgents"
        return LaunchAgentAutostart(agents / f"{LAUNCH_AGENT_LABEL}.plist")
    config = _xdg_config_home(home, os.environ if env is None else env)
    return XdgAutostart(config / "autostart" / f"{APP_NAME}.desktop")


def _xdg_config_home(home: Path, env: Mapping[str, str]) -> Path:
    # The XDG Base Directory spec says a relative $XDG_CONFIG_HOME is invalid and must be ignored.
    configured = env.get("XDG_CONFIG_HOME", "")
    if configured and Path(configured).is_absolute():
        return Path(configured)
    return home / ".config"


def _checked(command: Sequence[str]) -> list[str]:
    if isinstance(command, str):
        # A str is a Sequence[str] too: it would become one argument per character.
        raise TypeError("pass the command as a list of arguments, not one string")
    argv = list(command)
    if not argv or not argv[0]:
        raise AutostartError("the command to start at login is empty")
    return argv


# --- Linux and other XDG desktops ---------------------------------------------------------------

# The Desktop Entry spec's reserved characters: an argument holding any of them must be quoted.
# Plus CR: quoting it is harmless and spares readers that split on any whitespace.
_EXEC_RESERVED = frozenset(" \t\n\r\"'\\><~|&;$*?#()`")
_EXEC_ESCAPED_IN_QUOTES = re.compile(r'(["`$\\])')


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
        text = _desktop_entry(_checked(command))
        self._refuse_foreign("replace")
        _write_atomically(self.path, text.encode("utf-8"))

    def disable(self) -> None:
        self._refuse_foreign("remove")
        _remove(self.path)

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
        text = _read_text(self.path)
        return None if text is None else _desktop_entry_values(text)

    def _refuse_foreign(self, verb: str) -> None:
        values = self._values()
        if values is not None and values.get(MARKER_KEY) != "1":
            raise _foreign(self.path, verb)


# --- macOS ---------------------------------------------------------------------------------------


def _launch_agent(command: Sequence[str]) -> dict[str, object]:
    """Our LaunchAgent: launchd starts it once at login, as a GUI process of the user's session."""
    return {
        "Label": LAUNCH_AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        # Interactive: launchd must not throttle the CPU or I/O of an app the user works with.
        "ProcessType": "Interactive",
        # Aqua: only in a graphical login, not in an ssh session, where a tray app has no menu bar.
        "LimitLoadToSessionType": "Aqua",
        MARKER_KEY: True,
    }


class LaunchAgentAutostart:
    """``~/Library/LaunchAgents/org.domi.desktop.plist``; launchd reads it at the next login."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def enable(self, command: Sequence[str]) -> None:
        data = plistlib.dumps(_launch_agent(_checked(command)), fmt=plistlib.FMT_XML)
        self._refuse_foreign("replace")
        _write_atomically(self.path, data)

    def disable(self) -> None:
        self._refuse_foreign("remove")
        _remove(self.path)

    def is_enabled(self) -> bool:
        return self.path.is_file()

    def describe(self) -> str:
        return str(self.path)

    def _refuse_foreign(self, verb: str) -> None:
        try:
            with self.path.open("rb") as file:
                agent = plistlib.load(file)
        except FileNotFoundError:
            return
        except (OSError, plistlib.InvalidFileException, ValueError):
            agent = None
        if not isinstance(agent, dict) or agent.get(MARKER_KEY) is not True:
            raise _foreign(self.path, verb)


# --- Windows -------------------------------------------------------------------------------------


class RunKeyAutostart:
    """The value ``domi-desktop`` under ``HKCU\\...\\Run``: Explorer runs it at login.

    A registry value has no room for a marker, so the value's name is what makes it ours.
    """

    def __init__(self, registry: RegistryLike) -> None:
        self._registry = registry

    def enable(self, command: Sequence[str]) -> None:
        # Explorer hands the value to CreateProcess: quote it by the MS C runtime's argv rules.
        self._registry.set(APP_NAME, subprocess.list2cmdline(_checked(command)))

    def disable(self) -> None:
        self._registry.delete(APP_NAME)

    def is_enabled(self) -> bool:
        return self._registry.get(APP_NAME) is not None

    def describe(self) -> str:
        return f"HKEY_CURRENT_USER\\{RUN_KEY}, value {APP_NAME}"


if sys.platform == "win32":
    import winreg

    def _registry_error(error: OSError) -> AutostartError:
        return AutostartError(f"cannot write HKEY_CURRENT_USER\\{RUN_KEY}: {error}")

    class WindowsRunKey:
        """``RegistryLike`` over the current user's Run key."""

        def get(self, name: str) -> str | None:
            try:
                with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
                    value, _kind = winreg.QueryValueEx(key, name)
            except FileNotFoundError:
                return None
            return str(value)

        def set(self, name: str, value: str) -> None:
            try:
                with winreg.CreateKeyEx(
                    winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE
                ) as key:
                    winreg.SetValueEx(key, name, 0, winreg.REG_SZ, value)
            except OSError as error:
                raise _registry_error(error) from error

        def delete(self, name: str) -> None:
            try:
                with winreg.OpenKey(
                    winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE
                ) as key:
                    winreg.DeleteValue(key, name)
            except FileNotFoundError:
                pass
            except OSError as error:
                raise _registry_error(error) from error


def _user_run_key() -> RegistryLike:
    if sys.platform == "win32":
        return WindowsRunKey()
    raise AutostartError("the Windows registry exists only on Windows; pass a registry to use")


# --- files ---------------------------------------------------------------------------------------


def _foreign(path: Path, verb: str) -> AutostartError:
    return AutostartError(
        f"{path} was not written by domi-desktop, so it was left alone; "
        f"{verb} it yourself if it should go"
    )


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise AutostartError(f"cannot read {path}: {error.strerror}") from error


def _write_atomically(path: Path, data: bytes) -> None:
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


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise AutostartError(f"cannot remove {path}: {error.strerror}") from error
