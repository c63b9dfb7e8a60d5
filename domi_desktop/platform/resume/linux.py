"""Linux: logind's ``PrepareForSleep(b)`` on the system bus (``true`` before sleep, ``false`` after)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable

from PySide6.QtCore import SLOT, QObject, Slot
from PySide6.QtDBus import QDBusConnection

from domi_desktop.platform.resume.base import PowerCallbacks

LOGIND_SERVICE = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
LOGIND_MANAGER = "org.freedesktop.login1.Manager"
_SIGNAL = (LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "PrepareForSleep")
_SLOT = "onPrepareForSleep(bool)"
# libdbus's built-in address of the system bus, used when $DBUS_SYSTEM_BUS_ADDRESS is unset.
DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"

_connection_ids = itertools.count(1)


class LogindResumeSource(QObject):
    """Reports logind's sleep and resume on the Qt thread this object lives in.

    Each ``start`` opens a private connection to the address in ``$DBUS_SYSTEM_BUS_ADDRESS`` as it is
    then, rather than ``QDBusConnection.systemBus()``: libdbus reads that variable once per process
    and keeps a failed system bus forever, so a bus that appears later could never be used.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._callbacks: PowerCallbacks | None = None
        self._connection_name: str | None = None

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or DEFAULT_SYSTEM_BUS_ADDRESS
        name = f"domi-desktop-logind-{next(_connection_ids)}"
        bus = QDBusConnection.connectToBus(address, name)
        if not bus.isConnected():
            self.status = f"no system bus (logind unavailable): {bus.lastError().message()}"
            QDBusConnection.disconnectFromBus(name)
            return False
        # PySide6 connects a D-Bus signal only to a QObject slot named by SLOT(), not to a callable;
        # its stub types that slot as bytes, but only SLOT()'s str is accepted at run time.
        subscribed = bus.connect(*_SIGNAL, self, SLOT(_SLOT))  # type: ignore[call-overload]
        if not subscribed:
            self.status = f"cannot listen to logind: {bus.lastError().message()}"
            QDBusConnection.disconnectFromBus(name)
            return False
        self._callbacks = PowerCallbacks("logind", on_resume, on_sleep)
        self._connection_name = name
        self.status = f"listening to logind PrepareForSleep on {address}"
        return True

    def stop(self) -> None:
        if self._connection_name is not None:
            # Unhook the slot first: a signal in flight must not reach this object once it is freed.
            bus = QDBusConnection(self._connection_name)
            bus.disconnect(*_SIGNAL, self, SLOT(_SLOT))  # type: ignore[call-overload]
            QDBusConnection.disconnectFromBus(self._connection_name)
        self._connection_name = None
        self._callbacks = None

    # The slot's C++ name is the method's own: an alias by @Slot(bool, name=...) crashed the process
    # when QtDBus delivered the signal (PySide6 6.12).
    @Slot(bool)
    def onPrepareForSleep(self, sleeping: bool) -> None:
        """Called by QtDBus only."""
        if self._callbacks is not None:
            self._callbacks.deliver("sleep" if sleeping else "resume")
