"""The fake NetworkManager and UPower on the private system bus, seen by jeepney and by Qt."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, MatchRule, Properties, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection, Proxy, open_dbus_connection
from jeepney.wrappers import DBusErrorResponse, unwrap_msg

from tests.desktop.harness import Child, FakeNetworkManager, FakeUPower

pytestmark = pytest.mark.gui

NETINFO_PROBE = Path(__file__).with_name("qt_netinfo_probe.py")
NM = DBusAddress(
    "/org/freedesktop/NetworkManager",
    bus_name="org.freedesktop.NetworkManager",
    interface="org.freedesktop.NetworkManager",
)
UPOWER = DBusAddress(
    "/org/freedesktop/UPower", bus_name="org.freedesktop.UPower", interface="org.freedesktop.UPower"
)
DISPLAY_DEVICE = DBusAddress(
    "/org/freedesktop/UPower/devices/DisplayDevice",
    bus_name="org.freedesktop.UPower",
    interface="org.freedesktop.UPower.Device",
)
CHANGED = MatchRule(
    type="signal", interface="org.freedesktop.DBus.Properties", member="PropertiesChanged"
)


def system_bus_connection() -> DBusConnection:
    return open_dbus_connection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])


def call(conn: DBusConnection, address: DBusAddress, method: str) -> Any:
    return unwrap_msg(conn.send_and_get_reply(new_method_call(address, method), timeout=60))[0]


def get_all(conn: DBusConnection, address: DBusAddress) -> dict[str, Any]:
    props = unwrap_msg(conn.send_and_get_reply(Properties(address).get_all(), timeout=60))[0]
    return {name: value for name, (_sig, value) in props.items()}


def get(conn: DBusConnection, address: DBusAddress, name: str) -> Any:
    return unwrap_msg(conn.send_and_get_reply(Properties(address).get(name), timeout=60))[0][1]


# --- NetworkManager


def test_fake_networkmanager_serves_what_qt_reads(fake_networkmanager: FakeNetworkManager) -> None:
    with system_bus_connection() as conn:
        manager = get_all(conn, NM)
        assert (manager["State"], manager["Connectivity"], manager["Metered"]) == (70, 4, 2)
        assert manager["PrimaryConnectionType"] == "802-3-ethernet"
        assert call(conn, NM, "CheckConnectivity") == 4
        # Qt's path to the transport medium: primary connection -> its first device.
        active = DBusAddress(
            manager["PrimaryConnection"],
            bus_name=NM.bus_name,
            interface="org.freedesktop.NetworkManager.Connection.Active",
        )
        (device_path,) = get(conn, active, "Devices")
        device = DBusAddress(
            device_path, bus_name=NM.bus_name, interface="org.freedesktop.NetworkManager.Device"
        )
        assert (get(conn, device, "DeviceType"), get(conn, device, "Metered")) == (1, 2)

        with conn.filter(CHANGED) as signals:
            Proxy(message_bus, conn).AddMatch(CHANGED)
            fake_networkmanager.go_offline()
            changed = conn.recv_until_filtered(signals, timeout=60)
        interface, values, _invalidated = changed.body
        assert interface == "org.freedesktop.NetworkManager"
        assert {k: v for k, (_s, v) in values.items()} == {
            "State": 20,
            "Connectivity": 1,
            "PrimaryConnection": "/",
            "PrimaryConnectionType": "",
        }
        assert get_all(conn, NM)["State"] == 20


def test_fake_networkmanager_refuses_unknown_changes(
    fake_networkmanager: FakeNetworkManager,
) -> None:
    with pytest.raises(DBusErrorResponse, match="'satellite' is not one of"):
        fake_networkmanager.update(primary="satellite")
    with pytest.raises(DBusErrorResponse, match="unknown key 'Speed'"):
        fake_networkmanager.control("Update", "a{sv}", {"Speed": ("u", 1)})


def test_qt_network_information_follows_the_fake(
    fake_networkmanager: FakeNetworkManager, spawn: Callable[..., Child]
) -> None:
    probe = spawn([sys.executable, str(NETINFO_PROBE)])
    (loaded,) = probe.wait_for_event("loaded", timeout=60)
    assert loaded["ok"], loaded
    assert loaded["backend"] == "networkmanager"
    assert (loaded["reachability"], loaded["metered"], loaded["transport"]) == (
        "Online",
        False,
        "Ethernet",
    )

    latencies: dict[str, float] = {}
    sent = fake_networkmanager.go_offline()
    (event,) = probe.wait_for_event("reachability", value="Disconnected", timeout=60)
    latencies["offline"] = event["t"] - sent

    sent = fake_networkmanager.update(state=70, connectivity=4, primary="modem", metered=1)
    (event,) = probe.wait_for_event("reachability", value="Online", timeout=60)
    latencies["online"] = event["t"] - sent
    (event,) = probe.wait_for_event("transport", value="Cellular", timeout=60)
    latencies["transport"] = event["t"] - sent
    (event,) = probe.wait_for_event("metered", value=True, timeout=60)
    latencies["metered"] = event["t"] - sent

    sent = fake_networkmanager.update(connectivity=2)
    (event,) = probe.wait_for_event("portal", value=True, timeout=60)
    latencies["portal"] = event["t"] - sent

    print("fake NM change -> Qt signal:", {k: f"{v * 1000:.1f} ms" for k, v in latencies.items()})
    assert all(0 <= v <= 2.0 for v in latencies.values()), latencies


# --- UPower


def test_fake_upower_reports_a_battery_and_its_changes(fake_upower: FakeUPower) -> None:
    with system_bus_connection() as conn:
        assert get_all(conn, UPOWER)["OnBattery"] is False
        assert call(conn, UPOWER, "GetDisplayDevice") == DISPLAY_DEVICE.object_path
        assert "/org/freedesktop/UPower/devices/battery_BAT0" in call(
            conn, UPOWER, "EnumerateDevices"
        )
        display = get_all(conn, DISPLAY_DEVICE)
        assert (display["Type"], display["IsPresent"], display["Percentage"]) == (2, True, 80.0)
        assert display["State"] == 1  # charging

        with conn.filter(CHANGED) as signals:
            Proxy(message_bus, conn).AddMatch(CHANGED)
            fake_upower.update(on_battery=True, percentage=15)
            seen: dict[str, dict[str, Any]] = {}
            while not {UPOWER.object_path, DISPLAY_DEVICE.object_path} <= seen.keys():
                msg = conn.recv_until_filtered(signals, timeout=60)
                path = msg.header.fields[1]
                seen.setdefault(path, {}).update({k: v for k, (_s, v) in msg.body[1].items()})
        assert seen[UPOWER.object_path] == {"OnBattery": True}
        assert seen[DISPLAY_DEVICE.object_path]["Percentage"] == 15.0
        assert seen[DISPLAY_DEVICE.object_path]["State"] == 2  # discharging
        assert get(conn, DISPLAY_DEVICE, "Percentage") == 15.0


def test_fake_upower_can_lose_its_battery(fake_upower: FakeUPower) -> None:
    fake_upower.update(battery=False)
    with system_bus_connection() as conn:
        assert call(conn, UPOWER, "EnumerateDevices") == [
            "/org/freedesktop/UPower/devices/line_power_AC"
        ]
        display = get_all(conn, DISPLAY_DEVICE)
        assert (display["IsPresent"], display["Percentage"]) == (False, 0.0)
    with pytest.raises(DBusErrorResponse, match=r"not within 0\.\.100"):
        fake_upower.update(percentage=140)
