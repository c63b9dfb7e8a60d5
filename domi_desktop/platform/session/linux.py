"""Linux: logind's ``Unlock`` signal on this process's session object
(``org.freedesktop.login1.Session``), found with ``GetSessionByPID``. Outside a logind session
(started by a service manager, or no logind) there is no unlock to hear, and it says so."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

from PySide6.QtCore import SLOT, QObject, Slot
from PySide6.QtDBus import QDBusConnection

from domi_desktop.platform.conditions.dbuswatch import BusCaller, BusError

LOGIND_SERVICE = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
_SLOT = "onUnlock()"

_connection_ids = itertools.count(1)


class LogindUnlockSource(QObject):
    """On a private connection to ``$DBUS_SYSTEM_BUS_ADDRESS``, as the resume source."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._on_unlock: Callable[[], None] | None = None
        self._connection: tuple[str, str] | None = None

    def start(self, on_unlock: Callable[[], None]) -> bool:
        self.stop()
        address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS
        name = f"domi-desktop-unlock-{next(_connection_ids)}"
        bus = QDBusConnection.connectToBus(address, name)
        path = self._session_path(bus)
        if path is None:
            QDBusConnection.disconnectFromBus(name)
            return False
        # A QObject slot named by SLOT(): PySide6 connects D-Bus signals to nothing else.
        if not bus.connect(  # type: ignore[call-overload]
            LOGIND_SERVICE, path, SESSION, "Unlock", self, SLOT(_SLOT)
        ):
            self.status = f"cannot listen to logind: {bus.lastError().message()}"
            QDBusConnection.disconnectFromBus(name)
            return False
        self._connection = (name, path)
        self._on_unlock = on_unlock
        self.status = f"listening to logind Unlock of {path}"
        return True

    def _session_path(self, bus: QDBusConnection) -> str | None:
        if not bus.isConnected():
            self.status = f"no system bus (logind unavailable): {bus.lastError().message()}"
            return None
        # Over jeepney: QtDBus in PySide6 would send the pid as a signed ``i`` and be refused.
        try:
            with BusCaller() as caller:
                (path,) = caller.call(
                    LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "GetSessionByPID", "u",
                    os.getpid(),
                )  # fmt: skip
        except BusError as error:
            self.status = f"not in a logind session, so no unlock to hear: {error}"
            return None
        return str(path)

    def stop(self) -> None:
        if self._connection is not None:
            name, path = self._connection
            # Unhook the slot before the connection goes: a signal in flight must not reach a
            # freed object.
            QDBusConnection(name).disconnect(  # type: ignore[call-overload]
                LOGIND_SERVICE, path, SESSION, "Unlock", self, SLOT(_SLOT)
            )
            QDBusConnection.disconnectFromBus(name)
        self._connection = None
        self._on_unlock = None

    @Slot()
    def onUnlock(self) -> None:
        """Called by QtDBus only."""
        if self._on_unlock is not None:
            self._on_unlock()
