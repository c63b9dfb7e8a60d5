"""NetworkManager's active connections on the private system bus, read and watched for
the ``network_name`` condition: the Wi-Fi network's SSID, and ``ethernet`` for a wired one."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from domi_desktop.platform.conditions.nmnames import NetworkManagerNames
from tests.desktop.harness import FakeNetworkManager

pytestmark = pytest.mark.gui

WAIT_MS = 60_000


def join(nm: FakeNetworkManager, **changes: object) -> float:
    signatures = {"Active": "as", "Ssid": "s"}
    body = {key: (signatures[key], value) for key, value in changes.items()}
    return float(nm.control("Update", "a{sv}", body))


def test_it_names_the_wired_and_the_wifi_networks(
    fake_networkmanager: FakeNetworkManager, qapp: QCoreApplication
) -> None:
    names = NetworkManagerNames()
    assert names.read() == frozenset({"ethernet"})
    join(fake_networkmanager, Active=["wifi"])
    assert names.read() == frozenset({"office"})
    join(fake_networkmanager, Active=["ethernet", "wifi"], Ssid="café ☕")
    assert names.read() == frozenset({"ethernet", "café ☕"})


def test_joining_another_network_is_reported(
    fake_networkmanager: FakeNetworkManager, qtbot: QtBot
) -> None:
    names = NetworkManagerNames()
    changes: list[float] = []
    assert names.start(lambda: changes.append(time.monotonic()))
    join(fake_networkmanager, Active=["wifi"])
    qtbot.waitUntil(lambda: bool(changes), timeout=WAIT_MS)
    seen = len(changes)
    join(fake_networkmanager, Ssid="home")
    qtbot.waitUntil(lambda: len(changes) > seen, timeout=WAIT_MS)
    assert names.read() == frozenset({"home"})
    names.stop()
    seen = len(changes)
    join(fake_networkmanager, Active=["ethernet"])
    qtbot.wait(300)
    assert len(changes) == seen


def test_without_networkmanager_it_is_on_no_named_network(
    system_bus: str, qapp: QCoreApplication
) -> None:
    names = NetworkManagerNames()
    assert names.read() == frozenset()
    assert names.status.startswith("cannot read the network names: ")
