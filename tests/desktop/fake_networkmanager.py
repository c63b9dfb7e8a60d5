"""A fake NetworkManager: `org.freedesktop.NetworkManager` on the private "system" bus.

    python tests/desktop/fake_networkmanager.py [--address ADDRESS] [--log calls.jsonl]

Enough of NetworkManager for Qt's `networkmanager` backend of QNetworkInformation (Qt 6.11), which
  - GetAll's org.freedesktop.NetworkManager at /org/freedesktop/NetworkManager and reads `State`
    (reachability), `Connectivity` (captive portal) and `PrimaryConnection`;
  - follows the PrimaryConnection (an ActiveConnection's `Devices`) to the first Device and reads
    its `DeviceType` (transport medium) and `Metered`, through QDBusInterface, so those objects
    must introspect;
  - listens to org.freedesktop.DBus.Properties.PropertiesChanged on the manager path: a change of
    `State`, `Connectivity`, `Metered` or `PrimaryConnection` there is all it reacts to (it
    re-reads the device type only when PrimaryConnection changes).
The legacy NetworkManager.PropertiesChanged(a{sv}) and StateChanged(u) signals are sent as well,
for clients older than Qt 6.

Values (NetworkManager's own numbers):
  State         0 unknown, 10 asleep, 20 disconnected, 30 disconnecting, 40 connecting,
                50 connected-local, 60 connected-site, 70 connected-global
  Connectivity  0 unknown, 1 none, 2 portal, 3 limited, 4 full
  Metered       0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no
Primary connection by medium: ethernet, wifi, bluetooth, modem, or none (PrimaryConnection "/").
Starts connected-global, full connectivity, ethernet, not metered.

For the names of the networks (a condition's `network_name`): `ActiveConnections` (ao) of the
manager lists the active connections; the Wi-Fi one's `SpecificObject` is an AccessPoint
(org.freedesktop.NetworkManager.AccessPoint, `Ssid` ay). Starts with only ethernet active and
the Wi-Fi network named "office"; joining another Wi-Fi network is a new active connection (a new
object path), as NetworkManager does.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same name:
  Update(a{sv}) -> d   keys State (u), Connectivity (u), Metered (u), Primary (s: a medium),
                       Active (as: the media whose connections are active), Ssid (s);
                       changes the values, emits the signals and returns the time.monotonic() at
                       which they were sent
"""

from __future__ import annotations

import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import (
    CONTROL_INTERFACE,
    CONTROL_PATH,
    BusService,
    Failure,
    Reply,
    serve,
)
from fakeprops import UPDATE_XML, PropertySet, check_update, sent_at
from jeepney import Message

NM = "org.freedesktop.NetworkManager"
NM_PATH = "/org/freedesktop/NetworkManager"
ACTIVE = "org.freedesktop.NetworkManager.Connection.Active"
DEVICE = "org.freedesktop.NetworkManager.Device"

# medium -> (NM device type, connection type as in PrimaryConnectionType, interface name)
MEDIA = {
    "ethernet": (1, "802-3-ethernet", "eth0"),
    "wifi": (2, "802-11-wireless", "wlan0"),
    "bluetooth": (5, "bluetooth", "bnep0"),
    "modem": (8, "gsm", "wwan0"),
}
NO_CONNECTION = "/"

MANAGER_XML = """
<method name="CheckConnectivity"><arg name="connectivity" type="u" direction="out"/></method>
<method name="state"><arg name="state" type="u" direction="out"/></method>
<signal name="StateChanged"><arg name="state" type="u"/></signal>
<signal name="PropertiesChanged"><arg name="properties" type="a{sv}"/></signal>
"""

UPDATE_KEYS = {
    "State": "u",
    "Connectivity": "u",
    "Metered": "u",
    "Primary": "s",
    "Active": "as",
    "Ssid": "s",
}
ACCESS_POINT = "org.freedesktop.NetworkManager.AccessPoint"


ACTIVE_SIGNATURES = {
    "Devices": "ao",
    "Type": "s",
    "Id": "s",
    "State": "u",
    "Default": "b",
    "SpecificObject": "o",
}


def connection_path(index: int) -> str:
    return f"{NM_PATH}/ActiveConnection/{index}"


def device_path(index: int) -> str:
    return f"{NM_PATH}/Devices/{index}"


class FakeNetworkManager:
    def __init__(self, service: BusService) -> None:
        self.service = service
        self.devices: dict[str, PropertySet] = {}
        self.connections: dict[str, str] = {}  # medium -> active connection path
        metered = 2
        for index, (medium, (device_type, conn_type, iface)) in enumerate(MEDIA.items(), 1):
            device = PropertySet(
                service,
                device_path(index),
                DEVICE,
                {"DeviceType": "u", "Metered": "u", "Interface": "s", "State": "u"},
                {"DeviceType": device_type, "Metered": metered, "Interface": iface, "State": 100},
            )
            device.serve()
            self.devices[medium] = device
            active = PropertySet(
                service,
                connection_path(index),
                ACTIVE,
                ACTIVE_SIGNATURES,
                {
                    "Devices": [device_path(index)],
                    "Type": conn_type,
                    "Id": f"fake {medium}",
                    "State": 2,  # activated
                    "Default": medium == "ethernet",
                    "SpecificObject": NO_CONNECTION,
                },
            )
            active.serve()
            self.connections[medium] = connection_path(index)
        self.active_media = ["ethernet"]
        self.joined = 0
        self.join("office")

        self.manager = PropertySet(
            service,
            NM_PATH,
            NM,
            {
                "State": "u",
                "Connectivity": "u",
                "Metered": "u",
                "PrimaryConnection": "o",
                "PrimaryConnectionType": "s",
                "NetworkingEnabled": "b",
                "ConnectivityCheckAvailable": "b",
                "Version": "s",
                "ActiveConnections": "ao",
            },
            {
                "State": 70,
                "Connectivity": 4,
                "Metered": metered,
                "PrimaryConnection": self.connections["ethernet"],
                "PrimaryConnectionType": MEDIA["ethernet"][1],
                "NetworkingEnabled": True,
                "ConnectivityCheckAvailable": True,
                "Version": "1.42.4",
                "ActiveConnections": self.active_paths(),
            },
        )
        self.manager.serve(
            {
                "CheckConnectivity": lambda _: Reply("u", (self.manager.values["Connectivity"],)),
                "state": lambda _: Reply("u", (self.manager.values["State"],)),
            },
            MANAGER_XML,
        )
        control = PropertySet(service, CONTROL_PATH, CONTROL_INTERFACE, {}, {})
        control.serve({"Update": self.update}, UPDATE_XML, recorded=False)

    def join(self, ssid: str) -> None:
        """The Wi-Fi connection becomes one to ``ssid``: a new access point and connection."""
        self.joined += 1
        index = 100 + self.joined
        point = f"{NM_PATH}/AccessPoint/{index}"
        PropertySet(
            self.service, point, ACCESS_POINT, {"Ssid": "ay"}, {"Ssid": ssid.encode()}
        ).serve()
        wifi = PropertySet(
            self.service,
            connection_path(index),
            ACTIVE,
            ACTIVE_SIGNATURES,
            {
                "Devices": [self.devices["wifi"].path],
                "Type": MEDIA["wifi"][1],
                "Id": ssid,
                "State": 2,
                "Default": False,
                "SpecificObject": point,
            },
        )
        wifi.serve()
        self.connections["wifi"] = connection_path(index)

    def active_paths(self) -> list[str]:
        return [self.connections[medium] for medium in self.active_media]

    def update(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        changes = check_update(msg, UPDATE_KEYS)
        if isinstance(changes, Failure):
            return changes
        manager: dict[str, Any] = {
            k: v for k, v in changes.items() if k in ("State", "Connectivity", "Metered")
        }
        if "Primary" in changes:
            medium = changes["Primary"]
            if medium != "none" and medium not in MEDIA:
                return Failure(
                    "org.freedesktop.DBus.Error.InvalidArgs",
                    f"Update: Primary {medium!r} is not one of {[*MEDIA, 'none']}",
                )
            manager["PrimaryConnection"] = self.connections.get(medium, NO_CONNECTION)
            manager["PrimaryConnectionType"] = MEDIA[medium][1] if medium in MEDIA else ""
        if "Ssid" in changes:
            self.join(changes["Ssid"])
        if "Active" in changes:
            unknown = [medium for medium in changes["Active"] if medium not in MEDIA]
            if unknown:
                return Failure(
                    "org.freedesktop.DBus.Error.InvalidArgs",
                    f"Update: Active {unknown[0]!r} is not one of {list(MEDIA)}",
                )
            self.active_media = list(changes["Active"])
        if "Ssid" in changes or "Active" in changes:
            manager["ActiveConnections"] = self.active_paths()
        if "Metered" in changes:
            # Qt reads the primary device's Metered at start and after PrimaryConnection changes.
            for device in self.devices.values():
                device.set({"Metered": changes["Metered"]})
        changed = self.manager.set(manager)
        if changed:
            legacy = {k: (self.manager.signatures[k], v) for k, v in changed.items()}
            self.service.emit(NM_PATH, NM, "PropertiesChanged", "a{sv}", (legacy,))
        if "State" in changed:
            self.service.emit(NM_PATH, NM, "StateChanged", "u", (changed["State"],))
        return sent_at(started)


def main() -> None:
    serve(__doc__, [NM], lambda service, _: FakeNetworkManager(service))


if __name__ == "__main__":
    main()
