"""Windows: the value ``domi-desktop`` under ``HKCU\\...\\CurrentVersion\\Run``, and the user's switch.

A registry value has no room for a marker, so the value's name is what makes it ours. Task Manager's
Startup tab and Settings > Apps > Startup switch an entry off without touching the Run key: they
write a value of the same name under ``Explorer\\StartupApproved\\Run``. That switch is respected:
an entry switched off there is reported as off, and only ``enable`` (the user's own click in our
Settings) switches it on again.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from typing import Protocol

from domi_desktop.platform.autostart.base import APP_NAME, AutostartError, checked

RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
STARTUP_APPROVED_KEY = r"Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run"
# Explorer's record of the switch: 12 bytes, the first the state (even: on, odd: switched off),
# then the FILETIME of the change (zero: never switched).
APPROVED = b"\x02" + bytes(11)


class RegistryLike(Protocol):
    """Values under ``HKEY_CURRENT_USER``; ``key`` is a subkey's path.

    A missing value or key reads as ``None``, and deleting one is fine. A ``str`` is a ``REG_SZ``,
    ``bytes`` a ``REG_BINARY``.
    """

    def get(self, key: str, name: str) -> str | bytes | None: ...

    def set(self, key: str, name: str, value: str | bytes) -> None: ...

    def delete(self, key: str, name: str) -> None: ...


def switched_off(approved: str | bytes | None) -> bool:
    """Whether a ``StartupApproved`` value says the user switched the entry off."""
    return isinstance(approved, bytes) and len(approved) > 0 and approved[0] % 2 == 1


class RunKeyAutostart:
    """The Run key's value, read together with the user's ``StartupApproved`` switch."""

    def __init__(self, registry: RegistryLike) -> None:
        self._registry = registry

    def enable(self, command: Sequence[str]) -> None:
        # Explorer hands the value to CreateProcess: quote it by the MS C runtime's argv rules.
        self._registry.set(RUN_KEY, APP_NAME, subprocess.list2cmdline(checked(command)))
        self._registry.set(STARTUP_APPROVED_KEY, APP_NAME, APPROVED)

    def disable(self) -> None:
        self._registry.delete(RUN_KEY, APP_NAME)
        self._registry.delete(STARTUP_APPROVED_KEY, APP_NAME)

    def is_enabled(self) -> bool:
        return self._registry.get(RUN_KEY, APP_NAME) is not None and not self._switched_off()

    def describe(self) -> str:
        where = f"HKEY_CURRENT_USER\\{RUN_KEY}, value {APP_NAME}"
        if self._registry.get(RUN_KEY, APP_NAME) is not None and self._switched_off():
            return f"{where} (disabled by you in Task Manager or Settings > Apps > Startup)"
        return where

    def _switched_off(self) -> bool:
        return switched_off(self._registry.get(STARTUP_APPROVED_KEY, APP_NAME))


if sys.platform == "win32":
    import winreg

    def _registry_error(verb: str, key: str, error: OSError) -> AutostartError:
        return AutostartError(f"cannot {verb} HKEY_CURRENT_USER\\{key}: {error}")

    class WindowsRegistry:
        """``RegistryLike`` over the current user's hive."""

        def get(self, key: str, name: str) -> str | bytes | None:
            try:
                with winreg.OpenKey(winreg.HKEY_CURRENT_USER, key) as handle:
                    value, kind = winreg.QueryValueEx(handle, name)
            except FileNotFoundError:
                return None
            except OSError as error:
                raise _registry_error("read", key, error) from error
            return bytes(value) if kind == winreg.REG_BINARY else str(value)

        def set(self, key: str, name: str, value: str | bytes) -> None:
            kind = winreg.REG_SZ if isinstance(value, str) else winreg.REG_BINARY
            try:
                with winreg.CreateKeyEx(
                    winreg.HKEY_CURRENT_USER, key, 0, winreg.KEY_SET_VALUE
                ) as handle:
                    winreg.SetValueEx(handle, name, 0, kind, value)
            except OSError as error:
                raise _registry_error("write", key, error) from error

        def delete(self, key: str, name: str) -> None:
            try:
                with winreg.OpenKey(
                    winreg.HKEY_CURRENT_USER, key, 0, winreg.KEY_SET_VALUE
                ) as handle:
                    winreg.DeleteValue(handle, name)
            except FileNotFoundError:
                pass
            except OSError as error:
                raise _registry_error("write", key, error) from error


def user_registry() -> RegistryLike:
    if sys.platform == "win32":
        return WindowsRegistry()
    raise AutostartError("the Windows registry exists only on Windows; pass a registry to use")
