"""Linux: logind's ``Inhibit("sleep", ...)`` on the system bus, which hands back a file descriptor;
the machine may not sleep (``block`` mode) until every copy of it is closed.

Our copy is made with ``os.dup``, so it is not inherited by the jobs we start: a job that outlives
its run (or a grandchild of it) cannot keep the machine awake.
"""

from __future__ import annotations

import itertools
import logging
import os

from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusUnixFileDescriptor

from domi_desktop.platform.inhibit.base import NoInhibition
from domi_desktop.ports import InhibitorHandle

LOGIND_SERVICE = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER = "org.freedesktop.login1.Manager"
DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
WHO = "domi-desktop"
CALL_TIMEOUT_MS = 2000

_log = logging.getLogger("domi_desktop.platform.inhibit")
_connection_ids = itertools.count(1)


class FdInhibition:
    """Held while ``fd`` is open."""

    def __init__(self, fd: int, why: str) -> None:
        self._fd: int | None = fd
        self._why = why

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.close(fd)
        except OSError as error:  # already gone: nothing is held either way
            _log.warning("closing the sleep inhibitor fd for %s: %s", self._why, error)
        _log.info("sleep allowed again (%s)", self._why)


class LogindSleepInhibitor:
    """Asks logind on the bus at ``$DBUS_SYSTEM_BUS_ADDRESS`` as it is at each ``acquire`` (a private
    connection each time, like the resume source: libdbus would keep a failed system bus forever).
    The fd outlives the connection, so the connection is closed at once."""

    def __init__(self, mode: str = "block") -> None:
        """``mode``: ``block`` keeps the machine awake; ``delay`` only holds a sleep back until
        released (at most logind's InhibitDelayMaxSec, 5 s by default), to do what must be done
        on the way to sleep once ``PrepareForSleep(true)`` has come."""
        self.status = "not used yet"
        self._mode = mode

    def acquire(self, why: str) -> InhibitorHandle:
        address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS
        name = f"domi-desktop-inhibit-{next(_connection_ids)}"
        bus = QDBusConnection.connectToBus(address, name)
        try:
            fd = self._inhibit(bus, why)
        finally:
            QDBusConnection.disconnectFromBus(name)
        if fd is None:
            _log.warning("cannot keep the machine awake for %s: %s", why, self.status)
            return NoInhibition()
        self.status = f"logind keeps the machine awake ({why})"
        _log.info("sleep inhibited by logind (%s)", why)
        return FdInhibition(fd, why)

    def _inhibit(self, bus: QDBusConnection, why: str) -> int | None:
        if not bus.isConnected():
            self.status = f"no system bus: {bus.lastError().message()}"
            return None
        call = QDBusMessage.createMethodCall(LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "Inhibit")
        call.setArguments(["sleep", WHO, why, self._mode])
        reply = bus.call(call, timeout=CALL_TIMEOUT_MS)
        if reply.type() != QDBusMessage.MessageType.ReplyMessage:
            self.status = f"logind refused Inhibit: {reply.errorName()}: {reply.errorMessage()}"
            return None
        values = reply.arguments()
        handle = values[0] if values else None
        if not isinstance(handle, QDBusUnixFileDescriptor) or not handle.isValid():
            self.status = f"logind's Inhibit returned no file descriptor: {values!r}"
            return None
        # The handle closes its own copy when it goes; ours stays until release.
        return os.dup(handle.fileDescriptor())
