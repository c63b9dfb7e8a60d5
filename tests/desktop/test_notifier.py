"""The freedesktop notifier in this process, against the fake desktop (which, like dunst, sends
ActionInvoked only to the connection that called Notify) and against real dunst."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg
from PySide6.QtWidgets import QApplication

from domi_desktop.platform.notify import FreedesktopNotifier, Notice
from tests.desktop.harness import FakeDesktop
from tests.desktop.realdesktop import RealDunst

pytestmark = pytest.mark.gui

WAIT = 60.0
"""Seconds a test waits for what it checks: generous, for loaded machines."""


def click_until(
    qtbot: Any, clicks: list[Any], expected: list[Any], *click: Callable[[], object]
) -> None:
    """Click (``click``) until ``clicks == expected``: a click that reaches the notifier before
    the reply to its Notify (the notification's id) is rightly ignored, and no state says when
    that reply has arrived. A click is answered once (the id is then forgotten)."""
    deadline = time.monotonic() + WAIT
    while clicks != expected:
        assert time.monotonic() < deadline, f"clicked {clicks}, expected {expected}"
        for each in click:
            each()
        qtbot.wait(200)


NOTIFICATIONS = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.freedesktop.Notifications",
)


@pytest.fixture
def notifier(qapp: QApplication) -> Iterator[tuple[FreedesktopNotifier, list[Any]]]:
    clicks: list[Any] = []
    made = FreedesktopNotifier("Open history")
    made.clicked.connect(clicks.append)
    yield made, clicks
    made.close()


def test_a_click_comes_back_with_its_run(
    fake_desktop: FakeDesktop, notifier: tuple[FreedesktopNotifier, list[Any]], qtbot: Any
) -> None:
    sender, clicks = notifier
    sender.notify(Notice("Run failed: Backup", "exit code 3", warning=True, run_id=42))
    (call,) = fake_desktop.wait_for("Notify")
    assert call["args"][3:6] == ["Run failed: Backup", "exit code 3", ["default", "Open history"]]
    assert call["args"][6]["urgency"] == 2
    click_until(qtbot, clicks, [42], lambda: fake_desktop.invoke_action(1))


def test_a_click_on_someone_elses_notification_is_ignored(
    fake_desktop: FakeDesktop, notifier: tuple[FreedesktopNotifier, list[Any]], qtbot: Any
) -> None:
    sender, clicks = notifier
    with open_dbus_connection("SESSION") as other:
        message = new_method_call(
            NOTIFICATIONS, "Notify", "susssasa{sv}i",
            ("other-app", 0, "", "not ours", "", ["default", "x"], {}, -1),
        )  # fmt: skip
        theirs = int(unwrap_msg(other.send_and_get_reply(message, timeout=WAIT))[0])
        sender.notify(Notice("ours", "", run_id=7))
        fake_desktop.wait_for("Notify", count=2, timeout=WAIT)
        click_until(
            qtbot,
            clicks,
            [7],
            lambda: fake_desktop.invoke_action(theirs),
            lambda: fake_desktop.invoke_action(theirs + 1),
        )
    qtbot.wait(200)
    assert clicks == [7]


def test_a_hung_server_neither_blocks_notify_nor_close(
    start_fake_desktop: Callable[..., FakeDesktop], qapp: QApplication
) -> None:
    hung = 300.0
    desktop = start_fake_desktop(notify_delay=hung)
    sender = FreedesktopNotifier("Open history")
    began = time.monotonic()
    for number in range(3):
        sender.notify(Notice(f"n{number}", ""))
    assert time.monotonic() - began < hung  # returned before the server answered any
    desktop.wait_for("Notify", count=3, timeout=WAIT)  # the server has them all, unanswered
    sender.close()
    assert not sender._thread.is_alive()  # it did not stay behind waiting for the answers


def test_real_dunst_clicks_reach_the_notifier(
    real_dunst: RealDunst, notifier: tuple[FreedesktopNotifier, list[Any]], qtbot: Any
) -> None:
    sender, clicks = notifier
    sender.notify(Notice("Backup ran late", "due 09:00, ran 10:02", run_id=5))
    real_dunst.wait_for_count(1)
    time.sleep(0.2)
    real_dunst.invoke_default_action()
    qtbot.waitUntil(lambda: clicks == [5], timeout=60_000)
