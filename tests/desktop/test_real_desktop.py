"""The real desktop fixtures (dunst, xfce4-panel, xfwm4) and what the real servers really do."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from jeepney import DBusAddress, HeaderFields, MatchRule, message_bus, new_method_call, new_signal
from jeepney.io.blocking import DBusConnection, Proxy, open_dbus_connection
from jeepney.wrappers import unwrap_msg

from tests.desktop import realdesktop
from tests.desktop.harness import Child
from tests.desktop.realdesktop import RealDunst, RealPanel, RealWM

pytestmark = pytest.mark.gui

PROBE = Path(__file__).with_name("qt_probe.py")
NOTIFICATIONS = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.freedesktop.Notifications",
)
ACTION_INVOKED = MatchRule(type="signal", interface=NOTIFICATIONS.interface, member="ActionInvoked")
CLOSED = MatchRule(type="signal", interface=NOTIFICATIONS.interface, member="NotificationClosed")
WINDOW = """
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel("a dialog")
label.setWindowTitle("domi fixture window")
label.show()
app.exec()
"""


def notify(conn: DBusConnection, summary: str, actions: list[str], urgency: int) -> int:
    message = new_method_call(
        NOTIFICATIONS, "Notify", "susssasa{sv}i",
        ("fixture-test", 0, "", summary, "the body", actions, {"urgency": ("y", urgency)}, -1),
    )  # fmt: skip
    return int(unwrap_msg(conn.send_and_get_reply(message, timeout=60))[0])


def test_real_dunst_sends_the_click_only_to_the_connection_that_notified(
    real_dunst: RealDunst,
) -> None:
    print(f"dunst owned org.freedesktop.Notifications in {real_dunst.started_in:.2f} s")
    with (
        open_dbus_connection("SESSION") as notifier,
        open_dbus_connection("SESSION") as observer,
        notifier.filter(ACTION_INVOKED) as clicks,
        notifier.filter(CLOSED) as closes,
        observer.filter(ACTION_INVOKED) as observed,
    ):
        # The notifier adds no match rule at all; the observer asks for every ActionInvoked.
        Proxy(message_bus, observer).AddMatch(ACTION_INVOKED)
        notification_id = notify(notifier, "Backup ran late", ["default", "Open"], urgency=2)
        real_dunst.wait_for_count(1)
        (received,) = real_dunst.received()
        assert (received["summary"], received["body"], received["appname"]) == (
            "Backup ran late",
            "the body",
            "fixture-test",
        )
        assert (received["id"], received["urgency"]) == (notification_id, 2)
        assert received["actions"] == {"default": "Open"}

        real_dunst.invoke_default_action()
        click = notifier.recv_until_filtered(clicks, timeout=60)
        assert click.body == (notification_id, "default")
        assert click.header.fields[HeaderFields.destination] == notifier.unique_name
        # `dunstctl action` runs the action but, unlike a click, leaves the popup up.
        assert real_dunst.count_displayed() == 1
        real_dunst.close_all()
        closed = notifier.recv_until_filtered(closes, timeout=60)
        assert closed.body == (notification_id, 2)  # 2: dismissed by the user
        assert closed.header.fields[HeaderFields.destination] == notifier.unique_name
        real_dunst.wait_for_count(0)

        # A broadcast of our own, sent after dunst's signal: the observer's rule does match
        # ActionInvoked, and the first one it gets is ours, so dunst's never reached it.
        marker = new_signal(
            DBusAddress(NOTIFICATIONS.object_path, interface=NOTIFICATIONS.interface),
            "ActionInvoked", "us", (0, "marker"),
        )  # fmt: skip
        notifier.send(marker)
        seen = observer.recv_until_filtered(observed, timeout=60)
        assert seen.body == (0, "marker")

    (entry,) = real_dunst.history()  # closed, so now in dunst's history
    assert (entry["summary"], entry["appname"], entry["id"]) == (
        "Backup ran late",
        "fixture-test",
        notification_id,
    )


def test_real_dunst_close_all_empties_the_screen(real_dunst: RealDunst) -> None:
    with open_dbus_connection("SESSION") as conn:
        for urgency in (0, 1):
            notify(conn, f"urgency {urgency}", [], urgency)
    real_dunst.wait_for_count(2)
    assert [n["urgency"] for n in real_dunst.received()] == [0, 1]
    real_dunst.close_all()
    real_dunst.wait_for_count(0)
    assert len(real_dunst.history()) == 2


def start_probe(spawn: Callable[..., Child], *args: str) -> Child:
    return spawn([sys.executable, str(PROBE), *args])


def test_real_panel_shows_a_qt_tray_icon_and_its_status(
    real_panel: RealPanel, spawn: Callable[..., Child]
) -> None:
    print(f"xfce4-panel owned the watcher in {real_panel.started_in:.2f} s")
    assert real_panel.registered_items() == []
    probe = start_probe(spawn, "--message-after", "-1")
    (start,) = probe.wait_for_event("start", timeout=60)
    assert start["available"] is True  # Qt found the panel's watcher

    (item,) = real_panel.wait_for_items(1)
    assert real_panel.item_property(item, "Status") == "Active"
    _icon, _pixmaps, title, _text = real_panel.item_property(item, "ToolTip")
    assert title == "qt_probe"
    # Qt sends its icon as pixels, not as a theme name.
    assert real_panel.item_property(item, "IconName") == ""
    assert real_panel.item_property(item, "IconPixmap")

    probe.stop()  # the app goes away: the panel's watcher forgets its item
    realdesktop.wait_until(
        "the panel to drop the item", lambda: real_panel.registered_items() == [] or None, 30
    )


def test_qt_show_message_reaches_real_dunst_without_a_default_action(
    real_dunst: RealDunst, real_panel: RealPanel, spawn: Callable[..., Child]
) -> None:
    probe = start_probe(spawn, "--title", "Ran late", "--body", "due 09:00", "--message-after", "0")
    probe.wait_for_event("message_sent", timeout=60)
    real_dunst.wait_for_count(1)
    (received,) = real_dunst.received()
    assert (received["summary"], received["body"]) == ("Ran late", "due 09:00")
    # Qt offers no "default" action: with dunst a click on the popup can never reach the app
    # as messageClicked; the app must send Notify itself to be clickable.
    assert received.get("actions", {}) == {}


def test_real_wm_manages_a_window_found_by_title(
    real_wm: RealWM, spawn: Callable[..., Child]
) -> None:
    print(f"xfwm4 managed the screen in {real_wm.started_in:.2f} s")
    spawn([sys.executable, "-c", WINDOW])
    window = realdesktop.wait_for_window("domi fixture window", timeout=60)
    assert realdesktop.window_name(window) == "domi fixture window"
    frame = realdesktop.wait_until(
        "xfwm4 to frame the window", lambda: frame_extents(window), timeout=30
    )
    assert any(frame), frame  # a managed window has a frame; without a WM it has none


def frame_extents(window: int) -> list[int] | None:
    out = subprocess.run(
        ["xprop", "-id", str(window), "_NET_FRAME_EXTENTS"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    if "=" not in out:
        return None
    return [int(v) for v in out.split("=", 1)[1].split(",")]


def test_a_test_cannot_have_both_desktops() -> None:
    with pytest.raises(pytest.fail.Exception, match="use the fake desktop or the real one"):
        realdesktop.refuse_fake_desktop(["real_dunst", "fake_desktop"], "real_dunst")
    realdesktop.refuse_fake_desktop(["real_dunst", "fake_logind"], "real_dunst")
