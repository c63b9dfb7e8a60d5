"""Native notifications that never freeze the app.

On Linux, ``QSystemTrayIcon.showMessage`` makes a blocking D-Bus call: the GUI thread waits for
the notification server, up to 25 s when it hangs (measured in tests/desktop). So on Linux we
talk to ``org.freedesktop.Notifications`` ourselves from a worker thread (jeepney, with a 5 s
timeout), offer a default action, and listen for ``ActionInvoked`` on a second thread. Elsewhere
``showMessage`` does not block and is used as is. A notification is best effort: the history is
the record, so every failure here is logged and dropped.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sys
import threading
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

log = logging.getLogger(__name__)

APP_NAME = "domi-desktop"
SEND_TIMEOUT = 5.0
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    body: str
    warning: bool = False


class Notifier(QObject):
    """``notify`` from the GUI thread; ``clicked`` when the user clicks a notification."""

    clicked = Signal()

    def notify(self, notice: Notice) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop any worker threads."""


class TrayNotifier(Notifier):
    """``QSystemTrayIcon.showMessage``: native and non-blocking on macOS and Windows."""

    def __init__(self, tray: QSystemTrayIcon) -> None:
        super().__init__(tray)
        self._tray = tray
        tray.messageClicked.connect(self.clicked)

    def notify(self, notice: Notice) -> None:
        icon = (
            QSystemTrayIcon.MessageIcon.Warning
            if notice.warning
            else QSystemTrayIcon.MessageIcon.Information
        )
        self._tray.showMessage(notice.title, notice.body, icon, 10_000)


class FreedesktopNotifier(Notifier):
    """The freedesktop notification spec over the session bus, off the GUI thread."""

    _invoked = Signal(int)

    def __init__(self, default_action_label: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._label = default_action_label
        self._outbox: queue.Queue[Notice | None] = queue.Queue()
        self._ours: set[int] = set()
        self._ours_lock = threading.Lock()
        self._listener_connection: Any = None
        self._invoked.connect(self._on_invoked)
        self._sender = threading.Thread(target=self._send_loop, name="domi-notify", daemon=True)
        self._listener = threading.Thread(
            target=self._listen_loop, name="domi-notify-clicks", daemon=True
        )
        self._sender.start()
        self._listener.start()

    def notify(self, notice: Notice) -> None:
        self._outbox.put(notice)

    def close(self) -> None:
        self._outbox.put(None)
        connection = self._listener_connection
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.close()

    def _on_invoked(self, notification_id: int) -> None:
        with self._ours_lock:
            ours = notification_id in self._ours
        if ours:
            self.clicked.emit()

    def _send_loop(self) -> None:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        address = DBusAddress(NOTIFICATIONS_PATH, bus_name=NOTIFICATIONS, interface=NOTIFICATIONS)
        connection = None
        while (notice := self._outbox.get()) is not None:
            try:
                if connection is None:
                    connection = open_dbus_connection(bus="SESSION")
                message = new_method_call(
                    address,
                    "Notify",
                    "susssasa{sv}i",
                    (
                        APP_NAME,
                        0,
                        "dialog-warning" if notice.warning else "dialog-information",
                        notice.title,
                        notice.body,
                        ["default", self._label],
                        {
                            "urgency": ("y", 2 if notice.warning else 1),
                            "desktop-entry": ("s", APP_NAME),
                        },
                        -1,
                    ),
                )
                reply = connection.send_and_get_reply(message, timeout=SEND_TIMEOUT)
                with self._ours_lock:
                    self._ours.add(int(reply.body[0]))
            except Exception as error:  # best effort: the history is the record
                log.warning("notification not shown (%s): %s", type(error).__name__, error)
                if connection is not None:
                    connection.close()
                connection = None
        if connection is not None:
            connection.close()

    def _listen_loop(self) -> None:
        from jeepney import MatchRule, message_bus
        from jeepney.io.blocking import open_dbus_connection

        try:
            connection = open_dbus_connection(bus="SESSION")
            self._listener_connection = connection
            rule = MatchRule(type="signal", interface=NOTIFICATIONS, member="ActionInvoked",
                             path=NOTIFICATIONS_PATH)  # fmt: skip
            connection.send_and_get_reply(message_bus.AddMatch(rule), timeout=SEND_TIMEOUT)
            with connection.filter(rule) as signals:
                while True:
                    signal = connection.recv_until_filtered(signals)
                    self._invoked.emit(int(signal.body[0]))
        except Exception as error:  # the bus went away, or close() was called
            log.debug("no longer listening for notification clicks: %s", error)


def notifier_for(tray: QSystemTrayIcon, default_action_label: str) -> Notifier:
    if sys.platform.startswith("linux"):
        return FreedesktopNotifier(default_action_label, tray)
    return TrayNotifier(tray)
