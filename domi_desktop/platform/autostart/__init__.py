"""Start at login: an XDG autostart file (Linux and other Unix desktops), Login Items or a
LaunchAgent (macOS), a value under the HKCU Run key (Windows). One backend per OS, each in its own
module, imported only here; all written and removed by code, never behind the user's back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from domi_desktop.platform.autostart.base import APP_NAME, AutostartError
from domi_desktop.ports import Autostart

if TYPE_CHECKING:
    from domi_desktop.platform.autostart.macos import AppService
    from domi_desktop.platform.autostart.windows import RegistryLike

__all__ = ["AutostartError", "autostart_for_platform", "default_command", "gui_executable"]

# Console programs and their windowless twins, which open no console window at every login.
_WINDOWLESS = {"python.exe": "pythonw.exe", f"{APP_NAME}-cli.exe": f"{APP_NAME}.exe"}


def default_command() -> list[str]:
    """The command that starts this very installation of domi-desktop."""
    executable = gui_executable(sys.executable, sys.platform)
    if getattr(sys, "frozen", False):
        # A PyInstaller bundle: its executable is the app and takes no module argument.
        return [executable]
    return [executable, "-m", "domi_desktop"]


def gui_executable(executable: str, platform: str = sys.platform) -> str:
    """On Windows, the windowless twin next to a console program: ``pythonw.exe`` for
    ``python.exe``, and the bundle's ``domi-desktop.exe`` when its ``domi-desktop-cli.exe`` runs."""
    path = Path(executable)
    twin = _WINDOWLESS.get(path.name.lower())
    if platform == "win32" and twin is not None:
        windowless = path.with_name(twin)
        if windowless.is_file():
            return str(windowless)
    return executable


def autostart_for_platform(
    platform: str = sys.platform,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    registry: RegistryLike | None = None,
    app_service: AppService | None = None,
) -> Autostart:
    """The backend of ``platform``; ``home``, ``env``, ``registry`` and ``app_service`` (macOS's
    ``SMAppService``) default to the real ones."""
    if platform == "win32":
        from domi_desktop.platform.autostart.windows import RunKeyAutostart, user_registry

        return RunKeyAutostart(registry if registry is not None else user_registry())
    home = Path.home() if home is None else home
    if platform == "darwin":
        from domi_desktop.platform.autostart.macos import (
            LAUNCH_AGENT_LABEL,
            LaunchAgentAutostart,
            LoginItemAutostart,
            main_app_service,
        )

        agent = LaunchAgentAutostart(
            home / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT_LABEL}.plist"
        )
        service = app_service if app_service is not None else main_app_service()
        return agent if service is None else LoginItemAutostart(service, agent)
    from domi_desktop.platform.autostart.linux import XdgAutostart, xdg_config_home

    config = xdg_config_home(home, os.environ if env is None else env)
    return XdgAutostart(config / "autostart" / f"{APP_NAME}.desktop")
