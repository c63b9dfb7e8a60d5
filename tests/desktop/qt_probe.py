"""A minimal real Qt tray app, run as a child process by the fixture tests.

    python tests/desktop/qt_probe.py [--logind] [--message-after MS] [--title T] [--body B]

Prints one JSON line per event on stdout: {"event": ..., "t": time.monotonic(), ...}. Events:
  start             isSystemTrayAvailable / supportsMessages as Qt sees them
  tray_shown        after QSystemTrayIcon.show()
  logind_connected  (--logind) after connecting to login1's PrepareForSleep on the system bus
  tick              every 100 ms from a QTimer: gaps show when the GUI thread was blocked
  message_sent      after showMessage() returned: "blocked" is how long the call took
  prepare_for_sleep the value of a PrepareForSleep signal received
  message_clicked   QSystemTrayIcon.messageClicked
Runs until killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from PySide6.QtCore import SLOT, QObject, QTimer, Slot
from PySide6.QtDBus import QDBusConnection, QDBusMessage
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

LOGIN1 = "org.freedesktop.login1"
LOGIN1_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, "t": time.monotonic(), **fields}), flush=True)


class SleepReceiver(QObject):
    # PySide6's QDBusConnection.connect needs a QObject slot, not a Python callable (TESTBED).
    @Slot(bool)
    def onPrepare(self, going_to_sleep: bool) -> None:
        emit("prepare_for_sleep", value=going_to_sleep)


def connect_logind(receiver: SleepReceiver) -> None:
    bus = QDBusConnection.systemBus()
    # SLOT() adds Qt's method-type prefix: a bare "onPrepare(bool)" loses its first character.
    slot = SLOT("onPrepare(bool)")
    # The stubs say bytes, but PySide6 6.12 rejects bytes at runtime and takes this str.
    ok = bus.connect(LOGIN1, LOGIN1_PATH, MANAGER, "PrepareForSleep", receiver, slot)  # type: ignore[call-overload]
    # A round trip on the same connection after AddMatch: the daemon handles a connection's
    # messages in order, so once this answer is back the match rule is in force and a signal
    # emitted from now on reaches us. Only then do we tell the test we are listening.
    ping = QDBusMessage.createMethodCall(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"
    )
    reply = bus.call(ping)
    emit(
        "logind_connected",
        ok=ok,
        bus_connected=bus.isConnected(),
        barrier_ok=reply.type() == QDBusMessage.MessageType.ReplyMessage,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logind", action="store_true", help="listen to PrepareForSleep")
    parser.add_argument("--message-after", type=int, default=0, metavar="MS")
    parser.add_argument("--title", default="title")
    parser.add_argument("--body", default="body")
    args = parser.parse_args()

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    emit(
        "start",
        available=QSystemTrayIcon.isSystemTrayAvailable(),
        supports_messages=QSystemTrayIcon.supportsMessages(),
        platform=app.platformName(),
    )

    pixmap = QPixmap(32, 32)
    pixmap.fill(QColor("teal"))
    tray = QSystemTrayIcon(QIcon(pixmap))
    menu = QMenu()
    menu.addAction("Quit", app.quit)
    tray.setContextMenu(menu)
    tray.setToolTip("qt_probe")
    tray.messageClicked.connect(lambda: emit("message_clicked"))
    tray.show()
    emit("tray_shown", visible=tray.isVisible())

    receiver = SleepReceiver()
    if args.logind:
        connect_logind(receiver)

    ticker = QTimer()
    ticker.setInterval(100)
    ticker.timeout.connect(lambda: emit("tick"))
    ticker.start()

    def show_message() -> None:
        started = time.monotonic()
        tray.showMessage(args.title, args.body, QSystemTrayIcon.MessageIcon.Information, 5000)
        returned = time.monotonic()
        emit("message_sent", started=started, returned=returned, blocked=returned - started)

    if args.message_after >= 0:
        QTimer.singleShot(args.message_after, show_message)
    app.exec()


if __name__ == "__main__":
    main()
