"""Whether this desktop has a tray for the icon now, and word when one appears later (a panel that
starts after the app at login, or restarts).

Qt decides once per process whether StatusNotifierItem trays exist (its first
``isSystemTrayAvailable`` asks the session bus for ``org.kde.StatusNotifierWatcher`` and keeps the
answer): asked before the panel is up, it would never use the panel. So on Linux with a session bus
Qt is asked only once a watcher owns its name; until then the bus is watched for one.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtDBus import QDBusConnection, QDBusServiceWatcher
from PySide6.QtWidgets import QSystemTrayIcon

WATCHER = "org.kde.StatusNotifierWatcher"


class TrayHost(QObject):
    """``appeared`` when a tray host registers after ``watch``."""

    appeared = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher: QDBusServiceWatcher | None = None

    def present(self) -> bool:
        """Whether the icon can be shown now."""
        if sys.platform == "linux":
            bus = QDBusConnection.sessionBus()
            if bus.isConnected() and not bus.interface().isServiceRegistered(WATCHER).value():
                return False
        return QSystemTrayIcon.isSystemTrayAvailable()

    def watch(self) -> bool:
        """Watch for a tray host to come (once; before ``present``, so none is missed); False
        where none can be watched for."""
        bus = QDBusConnection.sessionBus()
        if sys.platform != "linux" or not bus.isConnected():
            return False
        if self._watcher is None:
            mode = QDBusServiceWatcher.WatchModeFlag.WatchForRegistration
            self._watcher = QDBusServiceWatcher(WATCHER, bus, mode, self)
            self._watcher.serviceRegistered.connect(lambda _name: self.appeared.emit())
        return True
