"""macOS: the app in Login Items through ``SMAppService`` (macOS 13+, from the .app bundle), else a
LaunchAgent in ``~/Library/LaunchAgents``.

``SMAppService.mainAppService()`` is what System Settings > General > Login Items lists and lets the
user switch off, and its ``status`` says whether they did. It needs the running program to be the
bundle's executable; a ``python -m domi_desktop``, macOS before 13 or pyobjc without the
ServiceManagement framework get the LaunchAgent, as does a registration that fails.
"""

from __future__ import annotations

import importlib
import plistlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from domi_desktop.platform.autostart.base import (
    MARKER_KEY,
    AutostartError,
    checked,
    foreign,
    remove,
    write_atomically,
)

LAUNCH_AGENT_LABEL = "org.domi.desktop"
LOGIN_ITEMS = "Login Items (System Settings > General > Login Items)"

# SMAppServiceStatus
NOT_REGISTERED = 0
ENABLED = 1
REQUIRES_APPROVAL = 2
NOT_FOUND = 3


class AppService(Protocol):
    """What is used of an ``SMAppService``; pyobjc returns an ``NSError **`` argument as a pair."""

    def status(self) -> int: ...

    def registerAndReturnError_(self, error: None, /) -> tuple[bool, Any]: ...

    def unregisterAndReturnError_(self, error: None, /) -> tuple[bool, Any]: ...


def in_app_bundle(executable: str) -> bool:
    """Whether ``executable`` is the program of a ``.app`` (``X.app/Contents/MacOS/name``)."""
    macos = Path(executable).parent
    return (
        macos.name == "MacOS"
        and macos.parent.name == "Contents"
        and macos.parent.parent.suffix == ".app"
    )


def main_app_service() -> AppService | None:
    """``SMAppService.mainAppService()`` when this is the bundle's program and it exists, else
    ``None``. Frozen only: a framework build of Python runs from a ``Python.app`` of its own."""
    if not (getattr(sys, "frozen", False) and in_app_bundle(sys.executable)):
        return None
    try:
        framework = importlib.import_module("ServiceManagement")
        service: AppService = framework.SMAppService.mainAppService()
    except (ImportError, AttributeError):
        # No pyobjc ServiceManagement, or macOS before 13, which has no SMAppService.
        return None
    return service


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
        data = plistlib.dumps(_launch_agent(checked(command)), fmt=plistlib.FMT_XML)
        self._refuse_foreign("replace")
        write_atomically(self.path, data)

    def disable(self) -> None:
        self._refuse_foreign("remove")
        remove(self.path)

    def is_enabled(self) -> bool:
        return self.path.is_file()

    def is_ours(self) -> bool:
        """Whether the file exists and carries our marker."""
        agent = self._load()
        return isinstance(agent, dict) and agent.get(MARKER_KEY) is True

    def describe(self) -> str:
        return str(self.path)

    def _load(self) -> object:
        """The plist's top object; ``None`` when there is no file or it is not a plist."""
        try:
            with self.path.open("rb") as file:
                return plistlib.load(file)
        except (OSError, plistlib.InvalidFileException, ValueError):
            return None

    def _refuse_foreign(self, verb: str) -> None:
        if self.path.exists() and not self.is_ours():
            raise foreign(self.path, verb)


class LoginItemAutostart:
    """The bundle as a login item of ``SMAppService``, with the LaunchAgent when registering fails.

    The user's switch in Login Items is the truth: ``is_enabled`` reads the service's status, and
    only ``enable`` (the user's own click in our Settings) registers again.
    """

    def __init__(self, service: AppService, fallback: LaunchAgentAutostart) -> None:
        self._service = service
        self._fallback = fallback

    def enable(self, command: Sequence[str]) -> None:
        argv = checked(command)
        registered, _error = self._service.registerAndReturnError_(None)
        if not registered:
            self._fallback.enable(argv)
            return
        # One entry only: a LaunchAgent of an earlier version would start a second copy.
        if self._fallback.is_ours():
            self._fallback.disable()

    def disable(self) -> None:
        if self._service.status() in (ENABLED, REQUIRES_APPROVAL):
            unregistered, error = self._service.unregisterAndReturnError_(None)
            if not unregistered:
                raise AutostartError(
                    f"cannot remove domi-desktop from {LOGIN_ITEMS}: {_why(error)}"
                )
        if self._fallback.is_ours():
            self._fallback.disable()

    def is_enabled(self) -> bool:
        return self._service.status() == ENABLED or self._fallback.is_ours()

    def describe(self) -> str:
        if self._fallback.is_ours():
            return self._fallback.describe()
        if self._service.status() == REQUIRES_APPROVAL:
            return f"{LOGIN_ITEMS}, waiting for you to allow it there"
        return LOGIN_ITEMS


def _why(error: Any) -> str:
    """An ``NSError``'s own sentence, or what there is."""
    if error is None:
        return "no reason given"
    describe = getattr(error, "localizedDescription", None)
    return str(describe()) if callable(describe) else str(error)
