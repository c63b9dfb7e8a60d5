"""A fake desktop on the session bus: a notification server and a StatusNotifierWatcher.

    python tests/desktop/fake_desktop.py --log calls.jsonl [--notify-delay SECONDS]

Owns `org.freedesktop.Notifications` (at /org/freedesktop/Notifications) and
`org.kde.StatusNotifierWatcher` (at /StatusNotifierWatcher), records every call made to them as one
JSON line in the log ({"t", "sender", "path", "interface", "method", "signature", "args"}; `t` is
time.monotonic(), comparable across processes on Linux), prints READY once it owns both names and
exits when the bus goes away (or on SIGTERM).

With Qt's StatusNotifierItem tray, `QSystemTrayIcon.isSystemTrayAvailable()` becomes True once this
runs, `show()` calls RegisterStatusNotifierItem and `showMessage()` calls Notify.

`--notify-delay` answers each Notify that much later (other calls are still served meanwhile), to
show how the application copes with a slow notification server.

Like dunst (see realdesktop.py), ActionInvoked and NotificationClosed go only to the connection
that called Notify for that id, never as a broadcast: an app listening on another connection
misses them here as it would on a real desktop. An id nobody notified gets no signal at all.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same names:
  EmitActionInvoked(u id, s action_key)   emits org.freedesktop.Notifications.ActionInvoked
  EmitNotificationClosed(u id, u reason)  emits org.freedesktop.Notifications.NotificationClosed
Both return the time.monotonic() at which the signal was sent (d).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import (
    CONTROL_PATH,
    BusService,
    Interface,
    Reply,
    connect,
    control_interface,
    open_log,
)
from jeepney import HeaderFields, Message

NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
ITEM_PATH = "/StatusNotifierItem"

NOTIFICATIONS_XML = """
<method name="Notify">
  <arg name="app_name" type="s" direction="in"/><arg name="replaces_id" type="u" direction="in"/>
  <arg name="app_icon" type="s" direction="in"/><arg name="summary" type="s" direction="in"/>
  <arg name="body" type="s" direction="in"/><arg name="actions" type="as" direction="in"/>
  <arg name="hints" type="a{sv}" direction="in"/><arg name="expire_timeout" type="i" direction="in"/>
  <arg name="id" type="u" direction="out"/>
</method>
<method name="CloseNotification"><arg name="id" type="u" direction="in"/></method>
<method name="GetCapabilities"><arg name="capabilities" type="as" direction="out"/></method>
<method name="GetServerInformation">
  <arg name="name" type="s" direction="out"/><arg name="vendor" type="s" direction="out"/>
  <arg name="version" type="s" direction="out"/><arg name="spec_version" type="s" direction="out"/>
</method>
<signal name="NotificationClosed"><arg name="id" type="u"/><arg name="reason" type="u"/></signal>
<signal name="ActionInvoked"><arg name="id" type="u"/><arg name="action_key" type="s"/></signal>
"""

WATCHER_XML = """
<method name="RegisterStatusNotifierItem"><arg name="service" type="s" direction="in"/></method>
<method name="RegisterStatusNotifierHost"><arg name="service" type="s" direction="in"/></method>
<property name="RegisteredStatusNotifierItems" type="as" access="read"/>
<property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
<property name="ProtocolVersion" type="i" access="read"/>
<signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
<signal name="StatusNotifierItemUnregistered"><arg type="s"/></signal>
<signal name="StatusNotifierHostRegistered"/>
"""

CONTROL_XML = """
<method name="EmitActionInvoked">
  <arg name="id" type="u" direction="in"/><arg name="action_key" type="s" direction="in"/>
  <arg name="sent_at" type="d" direction="out"/>
</method>
<method name="EmitNotificationClosed">
  <arg name="id" type="u" direction="in"/><arg name="reason" type="u" direction="in"/>
  <arg name="sent_at" type="d" direction="out"/>
</method>
"""


class FakeDesktop:
    def __init__(self, service: BusService, notify_delay: float) -> None:
        self.service = service
        self.notify_delay = notify_delay
        self.last_id = 0
        # notification id -> the unique name of the connection that called Notify
        self.senders: dict[int, str] = {}
        # item string as announced ("service/path") -> the bus name whose loss unregisters it
        self.items: dict[str, str] = {}

        service.add_interface(
            NOTIFICATIONS_PATH,
            Interface(
                NOTIFICATIONS,
                {
                    "Notify": self.notify,
                    "CloseNotification": self.close_notification,
                    "GetCapabilities": lambda _: Reply("as", (["body", "actions"],)),
                    "GetServerInformation": lambda _: Reply(
                        "ssss", ("domi-fake-desktop", "domi", "1.0", "1.2")
                    ),
                },
                introspection=NOTIFICATIONS_XML,
            ),
        )
        service.add_interface(
            WATCHER_PATH,
            Interface(
                WATCHER,
                {
                    "RegisterStatusNotifierItem": self.register_item,
                    "RegisterStatusNotifierHost": lambda _: Reply(),
                },
                properties={
                    "RegisteredStatusNotifierItems": ("as", lambda: list(self.items)),
                    "IsStatusNotifierHostRegistered": ("b", lambda: True),
                    "ProtocolVersion": ("i", lambda: 0),
                },
                introspection=WATCHER_XML,
            ),
        )
        service.add_interface(
            CONTROL_PATH,
            control_interface(
                {
                    "EmitActionInvoked": self.emit_action_invoked,
                    "EmitNotificationClosed": self.emit_notification_closed,
                },
                CONTROL_XML,
            ),
        )
        service.watch_name_owners(self.name_owner_changed)

    # -- org.freedesktop.Notifications

    def notify(self, msg: Message) -> Reply:
        replaces_id = msg.body[1]
        if replaces_id:  # the spec: replacing keeps the id
            notification_id = replaces_id
        else:
            self.last_id += 1
            notification_id = self.last_id
        self.senders[notification_id] = msg.header.fields.get(HeaderFields.sender, "")
        return Reply("u", (notification_id,), delay=self.notify_delay)

    def close_notification(self, msg: Message) -> Reply:
        # The spec: closing by request is reported with reason 3.
        self._notifications_signal("NotificationClosed", "uu", (msg.body[0], 3))
        return Reply()

    def _notifications_signal(self, member: str, signature: str, body: tuple[Any, ...]) -> float:
        destination = self.senders.get(body[0])
        if destination:
            self.service.emit(
                NOTIFICATIONS_PATH, NOTIFICATIONS, member, signature, body, destination=destination
            )
        return time.monotonic()

    # -- org.kde.StatusNotifierWatcher

    def register_item(self, msg: Message) -> Reply:
        sender = msg.header.fields.get(HeaderFields.sender, "")
        service_or_path: str = msg.body[0]
        # Like KDE's watcher: a bare object path means "this path on the caller's connection".
        if service_or_path.startswith("/"):
            item, owner = sender + service_or_path, sender
        else:
            item, owner = service_or_path + ITEM_PATH, service_or_path
        if item not in self.items:
            self.items[item] = owner
            self.service.emit(WATCHER_PATH, WATCHER, "StatusNotifierItemRegistered", "s", (item,))
        return Reply()

    def name_owner_changed(self, name: str, _old_owner: str, new_owner: str) -> None:
        if new_owner:
            return
        for item, owner in list(self.items.items()):
            if owner == name:
                del self.items[item]
                self.service.emit(
                    WATCHER_PATH, WATCHER, "StatusNotifierItemUnregistered", "s", (item,)
                )

    # -- control

    def emit_action_invoked(self, msg: Message) -> Reply:
        notification_id, key = msg.body
        return Reply(
            "d", (self._notifications_signal("ActionInvoked", "us", (notification_id, key)),)
        )

    def emit_notification_closed(self, msg: Message) -> Reply:
        notification_id, reason = msg.body
        sent = self._notifications_signal("NotificationClosed", "uu", (notification_id, reason))
        return Reply("d", (sent,))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="append one JSON line per call to this file")
    parser.add_argument("--notify-delay", type=float, default=0.0, metavar="SECONDS")
    args = parser.parse_args()
    with open_log(args.log) as log, connect("SESSION") as conn:
        service = BusService(conn, [NOTIFICATIONS, WATCHER], log)
        FakeDesktop(service, args.notify_delay)
        service.run()


if __name__ == "__main__":
    main()
