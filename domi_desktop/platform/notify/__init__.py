"""Native notifications that never freeze the app, and whose clicks reach it.

Linux: ``QSystemTrayIcon.showMessage`` makes a blocking D-Bus call (the GUI thread waits for the
notification server, up to 25 s when it hangs: measured in tests/desktop) and offers no
"default" action, so a click on the popup never comes back. We talk to
``org.freedesktop.Notifications`` ourselves, on ONE connection owned by a worker thread: it
sends each ``Notify`` and receives ``ActionInvoked`` / ``NotificationClosed`` on that same
connection, because dunst (and the spec's reference servers) send those signals to the
connection that notified only, never as a broadcast. Replies are awaited with a deadline, so a
dead server costs a warning, never a freeze.

macOS and Windows: ``showMessage`` is native there (NSUserNotification / UNUserNotificationCenter
through Qt's Cocoa tray, a Shell_NotifyIcon balloon that Windows 10+ shows as a toast) and does not
block; ``messageClicked`` arrives for the last message shown, which is the run we remember.
``desktop-notifier`` 6.2.0 (PyPI, a 34 KB wheel, "Production/Stable") was weighed as the
alternative there (wheel and metadata read) and not adopted:

- it is asyncio-only: every call is a coroutine, and its own ``DesktopNotifierSync`` warns that
  click callbacks "will not work on macOS or Linux without a running event loop"; beside Qt's
  loop that means a second thread running asyncio and hand-offs both ways, for what
  ``showMessage`` already does on the GUI thread without blocking;
- macOS: its UNUserNotificationCenter backend is used only inside an app bundle (a signed one,
  or it warns that notifications may fail) and needs a running CFRunLoop for callbacks; from a
  plain ``python -m domi_desktop`` it silently falls back to a dummy backend that shows nothing;
- Windows: six ``winrt-*`` projection packages (Windows-only wheels per Python version), and it
  writes its own AppUserModelId key under HKCU\\Software\\Classes on first use.

Its gain (a click callback per notification instead of for the last one shown) does not pay for
a second event loop, new platform-only dependencies and a silent failure outside a bundle; we
keep Qt's path and remember the run of the last message.

A notification is best effort: the history is the record, so every failure here is logged and
dropped.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import selectors
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

log = logging.getLogger(__name__)

APP_NAME = "domi-desktop"
SEND_TIMEOUT = 5.0
"""How long a ``Notify`` may wait for its reply before it counts as lost."""
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
MAX_REMEMBERED = 200
"""Shown notifications whose click we still map to a run; the oldest are forgotten first."""


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    body: str
    warning: bool = False
    run_id: int | None = None
    """The run a click opens in the history (``None``: the history as a whole)."""
    buttons: tuple[tuple[str, str], ...] = ()
    """(key, label) of action buttons, where the server shows them (freedesktop ``actions``);
    a press comes back as ``acted(key, schedule_id)``."""
    schedule_id: int | None = None


class Notifier(QObject):
    """``notify`` from the GUI thread; ``clicked(run_id or None)`` when the user clicks one,
    ``acted(key, schedule_id)`` when they press one of its buttons."""

    clicked = Signal(object)
    acted = Signal(str, object)

    def notify(self, notice: Notice) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop any worker threads."""


class TrayNotifier(Notifier):
    """``QSystemTrayIcon.showMessage``: native and non-blocking on macOS and Windows."""

    def __init__(self, tray: QSystemTrayIcon) -> None:
        super().__init__(tray)
        self._tray = tray
        self._last: int | None = None
        tray.messageClicked.connect(lambda: self.clicked.emit(self._last))

    def notify(self, notice: Notice) -> None:
        icon = (
            QSystemTrayIcon.MessageIcon.Warning
            if notice.warning
            else QSystemTrayIcon.MessageIcon.Information
        )
        # Qt reports a click on the last message only: that is the run to open.
        self._last = notice.run_id
        self._tray.showMessage(notice.title, notice.body, icon, 10_000)


class FreedesktopNotifier(Notifier):
    """The freedesktop notification spec over the session bus, on one connection in one thread."""

    _invoked = Signal(object)
    _pressed = Signal(str, object)

    def __init__(self, default_action_label: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._label = default_action_label
        self._outbox: queue.Queue[Notice | None] = queue.Queue()
        self._wake_read, self._wake_write = socket.socketpair()
        self._invoked.connect(self.clicked)
        self._pressed.connect(self.acted)
        self._thread = threading.Thread(target=self._run, name="domi-notify", daemon=True)
        self._thread.start()

    def notify(self, notice: Notice) -> None:
        self._outbox.put(notice)
        self._poke()

    def close(self) -> None:
        self._outbox.put(None)
        self._poke()
        self._thread.join(SEND_TIMEOUT)
        for end in (self._wake_read, self._wake_write):
            end.close()

    def _poke(self) -> None:
        with contextlib.suppress(OSError):  # closed: the thread is gone anyway
            self._wake_write.send(b"\0")

    # -- the worker thread: the only user of its connection ------------------------------------

    def _run(self) -> None:
        try:
            _Session(self).run()
        except Exception as error:  # no session bus, or it went away: notifications are off
            log.warning("notifications off (%s): %s", type(error).__name__, error)
            self._drain()

    def _drain(self) -> None:
        """After a failure, keep taking notices (and the close) so ``close`` never waits."""
        while self._outbox.get() is not None:
            log.warning("notification not shown: no session bus")


class _Session:
    """One connection: Notify calls out, their replies and the server's signals in."""

    def __init__(self, owner: FreedesktopNotifier) -> None:
        self.owner = owner
        self.pending: dict[int, tuple[float, Notice]] = {}
        """serial of a Notify -> (deadline, notice)"""
        self.shown: dict[int, Notice] = {}
        """notification id -> its notice, oldest first"""

    def run(self) -> None:
        from jeepney import DBusAddress, MatchRule, message_bus
        from jeepney.io.blocking import open_dbus_connection

        address = DBusAddress(NOTIFICATIONS_PATH, bus_name=NOTIFICATIONS, interface=NOTIFICATIONS)
        with open_dbus_connection(bus="SESSION") as connection:
            # Servers that broadcast (some do) reach us through this rule; dunst's unicast
            # signals reach us anyway, being addressed to this connection.
            rule = MatchRule(type="signal", interface=NOTIFICATIONS, path=NOTIFICATIONS_PATH)
            connection.send(message_bus.AddMatch(rule))
            with selectors.DefaultSelector() as selector:
                selector.register(connection.sock, selectors.EVENT_READ, "bus")
                selector.register(self.owner._wake_read, selectors.EVENT_READ, "wake")
                while self._send_queued(connection, address):
                    timeout = self._expire()
                    for key, _events in selector.select(timeout):
                        if key.data == "wake":
                            self.owner._wake_read.recv(4096)
                        else:
                            self._receive_all(connection)

    def _send_queued(self, connection: Any, address: Any) -> bool:
        """Send every queued notice; False once ``close`` asked to stop."""
        from jeepney import new_method_call

        while True:
            try:
                notice = self.owner._outbox.get_nowait()
            except queue.Empty:
                return True
            if notice is None:
                return False
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
                    ["default", self.owner._label, *(x for pair in notice.buttons for x in pair)],
                    {
                        "urgency": ("y", 2 if notice.warning else 1),
                        "desktop-entry": ("s", APP_NAME),
                    },
                    -1,
                ),
            )
            serial = next(connection.outgoing_serial)
            connection.send(message, serial=serial)
            self.pending[serial] = (time.monotonic() + SEND_TIMEOUT, notice)

    def _expire(self) -> float | None:
        """Forget Notify calls whose reply is overdue; the time until the next deadline."""
        now = time.monotonic()
        for serial, (deadline, _run) in list(self.pending.items()):
            if deadline <= now:
                del self.pending[serial]
                log.warning("notification not shown: no reply within %s s", SEND_TIMEOUT)
        if not self.pending:
            return None
        return max(0.0, min(deadline for deadline, _run in self.pending.values()) - now)

    def _receive_all(self, connection: Any) -> None:
        from jeepney import HeaderFields, MessageType

        while True:
            try:
                message = connection.receive(timeout=0)
            except TimeoutError:
                return
            header = message.header
            if header.message_type in (MessageType.method_return, MessageType.error):
                entry = self.pending.pop(header.fields.get(HeaderFields.reply_serial, -1), None)
                if entry is None:
                    continue
                if header.message_type is MessageType.error:
                    log.warning("notification not shown: %s", message.body)
                else:
                    self._remember(int(message.body[0]), entry[1])
            elif header.message_type is MessageType.signal:
                self._signal(header.fields.get(HeaderFields.member), message.body)

    def _remember(self, notification_id: int, notice: Notice) -> None:
        self.shown[notification_id] = notice
        while len(self.shown) > MAX_REMEMBERED:
            del self.shown[next(iter(self.shown))]

    def _signal(self, member: object, body: tuple[Any, ...]) -> None:
        if member == "ActionInvoked" and body and body[0] in self.shown:
            notice = self.shown[body[0]]
            if len(body) > 1 and body[1] != "default":
                self.owner._pressed.emit(str(body[1]), notice.schedule_id)
            else:
                self.owner._invoked.emit(notice.run_id)
        elif member == "NotificationClosed" and body:
            self.shown.pop(body[0], None)


def notifier_for(
    tray: QSystemTrayIcon, default_action_label: str, parent: QObject | None = None
) -> Notifier:
    """``parent`` owns a Linux notifier, which outlives the tray icon (made again when a panel
    appears later); elsewhere the notifier is the tray icon's own."""
    if sys.platform.startswith("linux"):
        return FreedesktopNotifier(default_action_label, parent)
    return TrayNotifier(tray)
