"""The desktop fixtures work, first against a plain D-Bus client, then with real Qt in a child."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, MatchRule, Properties, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection, Proxy, open_dbus_connection
from jeepney.wrappers import unwrap_msg

from tests.desktop.harness import Child, FakeDesktop, FakeLogind, require_desktop_env

pytestmark = pytest.mark.gui

PROBE = Path(__file__).with_name("qt_probe.py")
NOTIFICATIONS = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.freedesktop.Notifications",
)
WATCHER = DBusAddress(
    "/StatusNotifierWatcher",
    bus_name="org.kde.StatusNotifierWatcher",
    interface="org.kde.StatusNotifierWatcher",
)
LOGIN1 = DBusAddress(
    "/org/freedesktop/login1",
    bus_name="org.freedesktop.login1",
    interface="org.freedesktop.login1.Manager",
)


def call(
    conn: DBusConnection, address: DBusAddress, method: str, sig: str = "", *args: object
) -> tuple[Any, ...]:
    reply = conn.send_and_get_reply(new_method_call(address, method, sig, args), timeout=60)
    return tuple(unwrap_msg(reply))


def notify(conn: DBusConnection, summary: str, replaces_id: int = 0) -> int:
    reply = call(
        conn, NOTIFICATIONS, "Notify", "susssasa{sv}i",
        "test", replaces_id, "", summary, "body", [], {"urgency": ("y", 2)}, -1,
    )  # fmt: skip
    return int(reply[0])


# --- the fakes on their own, seen by a plain D-Bus client


def test_missing_environment_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(pytest.fail.Exception, match="make test-desktop"):
        require_desktop_env()


def test_fake_desktop_answers_like_a_notification_server(fake_desktop: FakeDesktop) -> None:
    with open_dbus_connection("SESSION") as conn:
        assert call(conn, NOTIFICATIONS, "GetCapabilities") == (["body", "actions"],)
        assert len(call(conn, NOTIFICATIONS, "GetServerInformation")) == 4
        first = notify(conn, "one")
        second = notify(conn, "two")
        assert second == first + 1
        assert notify(conn, "two again", replaces_id=second) == second

        with conn.filter(MatchRule(type="signal", interface=NOTIFICATIONS.interface)) as signals:
            Proxy(message_bus, conn).AddMatch(
                MatchRule(type="signal", interface=NOTIFICATIONS.interface)
            )
            fake_desktop.invoke_action(first)
            clicked = conn.recv_until_filtered(signals, timeout=60)
            fake_desktop.close_notification(first)
            closed = conn.recv_until_filtered(signals, timeout=60)
        assert (clicked.header.fields[3], clicked.body) == ("ActionInvoked", (first, "default"))
        assert (closed.header.fields[3], closed.body) == ("NotificationClosed", (first, 2))

    calls = fake_desktop.wait_for("Notify", count=3)
    assert [c["args"][3] for c in calls] == ["one", "two", "two again"]
    assert calls[0]["args"][6] == {"urgency": 2}  # variants unwrapped
    assert fake_desktop.calls("EmitActionInvoked") == []  # control calls are not recorded


def test_fake_watcher_registers_items(fake_desktop: FakeDesktop) -> None:
    props = Properties(WATCHER)
    with open_dbus_connection("SESSION") as item, open_dbus_connection("SESSION") as observer:
        assert unwrap_msg(observer.send_and_get_reply(props.get_all(), timeout=60)) == (
            {
                "RegisteredStatusNotifierItems": ("as", []),
                "IsStatusNotifierHostRegistered": ("b", True),
                "ProtocolVersion": ("i", 0),
            },
        )
        rule = MatchRule(type="signal", interface=WATCHER.interface)
        with observer.filter(rule) as signals:
            Proxy(message_bus, observer).AddMatch(rule)
            call(item, WATCHER, "RegisterStatusNotifierItem", "s", "/StatusNotifierItem")
            registered = observer.recv_until_filtered(signals, timeout=60)
            expected = f"{item.unique_name}/StatusNotifierItem"
            assert registered.body == (expected,)
            got = unwrap_msg(
                observer.send_and_get_reply(props.get("RegisteredStatusNotifierItems"), timeout=60)
            )
            assert got == (("as", [expected]),)
            item.close()  # the item's owner leaves: the watcher forgets it
            unregistered = observer.recv_until_filtered(signals, timeout=60)
            assert (unregistered.header.fields[3], unregistered.body) == (
                "StatusNotifierItemUnregistered",
                (expected,),
            )

    assert [c["args"] for c in fake_desktop.calls("RegisterStatusNotifierItem")] == [
        ["/StatusNotifierItem"]
    ]


def test_system_bus_is_private_and_exported(system_bus: str) -> None:
    assert os.environ["DBUS_SYSTEM_BUS_ADDRESS"] == system_bus
    assert system_bus != os.environ["DBUS_SESSION_BUS_ADDRESS"]


def test_fake_logind_signals_and_inhibitors(fake_logind: FakeLogind) -> None:
    with open_dbus_connection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"], enable_fds=True) as conn:
        rule = MatchRule(type="signal", interface=LOGIN1.interface, member="PrepareForSleep")
        with conn.filter(rule) as signals:
            Proxy(message_bus, conn).AddMatch(rule)
            fake_logind.prepare_for_sleep(True)
            assert conn.recv_until_filtered(signals, timeout=60).body == (True,)

        (fd,) = call(conn, LOGIN1, "Inhibit", "ssss", "sleep", "test", "flush", "delay")
        assert fake_logind.inhibitors_held() == 1
        fd.close()  # releasing the delay lock, as an app does when it is ready to sleep
        assert fake_logind.inhibitors_held() == 0
    assert [c["args"] for c in fake_logind.wait_for("Inhibit")] == [
        ["sleep", "test", "flush", "delay"]
    ]


# --- real Qt in a child process


def start_probe(spawn: Callable[..., Child], *args: str) -> Child:
    return spawn([sys.executable, str(PROBE), *args])


def test_qt_tray_registers_and_notifies(
    fake_desktop: FakeDesktop, spawn: Callable[..., Child]
) -> None:
    probe = start_probe(spawn, "--title", "Ran late", "--body", "due 09:00, ran 10:02")

    (start,) = probe.wait_for_event("start", timeout=60)
    assert start["platform"] == "xcb"
    assert start["available"] is True  # Qt found our watcher: the StatusNotifierItem tray

    (registration,) = fake_desktop.wait_for("RegisterStatusNotifierItem")
    # Qt 6.12 registers its unique connection name (older Qt: org.kde.StatusNotifierItem-PID-N).
    service = registration["args"][0]
    assert service == registration["sender"] or service.startswith("org.kde.StatusNotifierItem-")

    (notification,) = fake_desktop.wait_for("Notify")
    app_name, replaces_id, icon, summary, body, actions, hints, timeout = notification["args"]
    assert (summary, body, replaces_id, timeout) == ("Ran late", "due 09:00, ran 10:02", 0, 5000)
    assert (app_name, icon, hints) == ("qt_probe.py", "dialog-information", {"urgency": 0})
    # Qt offers no "default" action, so a real server may never report a click (see below).
    assert actions == []
    probe.wait_for_event("message_sent")

    # Our ids start at 1. Qt turns any ActionInvoked from the server into messageClicked (it
    # checks neither id nor key); whether a real server sends one without a "default" action
    # having been offered is up to that server.
    fake_desktop.invoke_action(1)
    probe.wait_for_event("message_clicked", timeout=60)


def test_prepare_for_sleep_reaches_qt(fake_logind: FakeLogind, spawn: Callable[..., Child]) -> None:
    probe = start_probe(spawn, "--logind", "--message-after", "-1")
    (connected,) = probe.wait_for_event("logind_connected", timeout=60)
    assert connected["ok"] and connected["bus_connected"] and connected["barrier_ok"]

    sent = fake_logind.prepare_for_sleep(False)
    # A generous deadline (loaded machines): how fast a resume wakes the app is the wake bench's.
    (received,) = probe.wait_for_event("prepare_for_sleep", timeout=60)
    assert received["value"] is False
    latency = received["t"] - sent
    # The fake reads its clock just after sending: a fast delivery comes out slightly negative.
    print(f"PrepareForSleep(false): emitted -> received by Qt in {latency * 1000:.1f} ms")


def test_slow_notification_server_blocks_show_message(
    start_fake_desktop: Callable[..., FakeDesktop], spawn: Callable[..., Child]
) -> None:
    delay = 3.0
    fake = start_fake_desktop(notify_delay=delay)
    probe = start_probe(spawn, "--message-after", "300")

    (sent,) = probe.wait_for_event("message_sent", timeout=60 + delay)
    (notification,) = fake.wait_for("Notify")
    # The probe prints in order: every tick before showMessage returned is already out; wait for
    # one more, so the gap across the call is measured.
    before = [e for e in probe.events() if e["event"] == "tick" and e["t"] < sent["returned"]]
    ticks = [e["t"] for e in probe.wait_for_event("tick", count=len(before) + 1)]
    during = [t for t in ticks if sent["started"] < t < sent["returned"]]
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    print(
        f"showMessage with a {delay} s Notify delay: blocked {sent['blocked']:.3f} s, "
        f"{len(during)} ticks during it, longest tick gap {max(gaps):.3f} s"
    )
    assert notification["t"] >= sent["started"]
    # Measured (Qt 6.12, StatusNotifierItem tray): showMessage() is a synchronous D-Bus call. It
    # returns only once Notify is answered and the event loop does not run meanwhile. The app must
    # therefore never call showMessage on its GUI thread against a possibly slow server.
    assert sent["blocked"] >= delay - 0.2
    assert during == []
    assert max(gaps) >= delay - 0.2
