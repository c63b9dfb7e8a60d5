"""A fake UPower: `org.freedesktop.UPower` on the private "system" bus.

    python tests/desktop/fake_upower.py [--address ADDRESS] [--log calls.jsonl] [--no-battery]

Serves /org/freedesktop/UPower (interface org.freedesktop.UPower: `OnBattery` b, `LidIsPresent` b,
`DaemonVersion` s; `EnumerateDevices() -> ao`, `GetDisplayDevice() -> o`,
`GetCriticalAction() -> s`) and the devices (interface org.freedesktop.UPower.Device):
  /org/freedesktop/UPower/devices/DisplayDevice    the composite "battery" desktops show
  /org/freedesktop/UPower/devices/battery_BAT0     the battery (listed only while present)
  /org/freedesktop/UPower/devices/line_power_AC    mains (`Online` = not on battery)
Device properties: `Type` u (1 line power, 2 battery), `Percentage` d, `State` u (0 unknown,
1 charging, 2 discharging, 3 empty, 4 fully charged), `IsPresent` b, `PowerSupply` b,
`TimeToEmpty`/`TimeToFull` x (seconds), `IconName` s, `NativePath` s.
Every change is announced with org.freedesktop.DBus.Properties.PropertiesChanged on the object
that changed; adding or removing the battery also emits DeviceAdded/DeviceRemoved(o).
Starts on mains, battery present at 80 %, charging (or with no battery: --no-battery).

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same name:
  Update(a{sv}) -> d   keys OnBattery (b), Percentage (d), State (u), Battery (b: present);
                       returns the time.monotonic() at which the signals were sent
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import CONTROL_INTERFACE, CONTROL_PATH, BusService, Failure, Reply, serve
from fakeprops import UPDATE_XML, PropertySet, check_update, sent_at
from jeepney import Message

UPOWER = "org.freedesktop.UPower"
UPOWER_PATH = "/org/freedesktop/UPower"
DEVICE = "org.freedesktop.UPower.Device"
DISPLAY_PATH = f"{UPOWER_PATH}/devices/DisplayDevice"
BATTERY_PATH = f"{UPOWER_PATH}/devices/battery_BAT0"
AC_PATH = f"{UPOWER_PATH}/devices/line_power_AC"

TYPE_LINE_POWER, TYPE_BATTERY = 1, 2
CHARGING, DISCHARGING, FULLY_CHARGED = 1, 2, 4

UPOWER_XML = """
<method name="EnumerateDevices"><arg name="devices" type="ao" direction="out"/></method>
<method name="GetDisplayDevice"><arg name="device" type="o" direction="out"/></method>
<method name="GetCriticalAction"><arg name="action" type="s" direction="out"/></method>
<signal name="DeviceAdded"><arg name="device" type="o"/></signal>
<signal name="DeviceRemoved"><arg name="device" type="o"/></signal>
"""

DEVICE_SIGNATURES = {
    "Type": "u",
    "Percentage": "d",
    "State": "u",
    "IsPresent": "b",
    "PowerSupply": "b",
    "Online": "b",
    "TimeToEmpty": "x",
    "TimeToFull": "x",
    "IconName": "s",
    "NativePath": "s",
}
UPDATE_KEYS = {"OnBattery": "b", "Percentage": "d", "State": "u", "Battery": "b"}


def battery_values(percentage: float, state: int, present: bool) -> dict[str, Any]:
    level = int(round(percentage / 20) * 20)
    if not present:
        icon = "battery-missing-symbolic"
    elif state == CHARGING:
        icon = f"battery-level-{level}-charging-symbolic"
    else:
        icon = f"battery-level-{level}-symbolic"
    return {
        "Percentage": float(percentage) if present else 0.0,
        "State": state if present else 0,
        "IsPresent": present,
        "TimeToEmpty": int(percentage * 180) if present and state == DISCHARGING else 0,
        "TimeToFull": int((100 - percentage) * 60) if present and state == CHARGING else 0,
        "IconName": icon,
    }


class FakeUPower:
    def __init__(self, service: BusService, battery: bool) -> None:
        self.service = service
        self.battery_present = battery
        self.percentage = 80.0
        self.state = CHARGING
        initial = battery_values(self.percentage, self.state, battery)
        common = {"PowerSupply": True, "Online": False, "NativePath": ""}
        self.display = PropertySet(
            service,
            DISPLAY_PATH,
            DEVICE,
            DEVICE_SIGNATURES,
            {**common, "Type": TYPE_BATTERY, **initial},
        )
        self.battery = PropertySet(
            service,
            BATTERY_PATH,
            DEVICE,
            DEVICE_SIGNATURES,
            {**common, "Type": TYPE_BATTERY, "NativePath": "BAT0", **initial},
        )
        self.ac = PropertySet(
            service,
            AC_PATH,
            DEVICE,
            DEVICE_SIGNATURES,
            {
                **common,
                **battery_values(0, 0, False),
                "Type": TYPE_LINE_POWER,
                "Online": True,
                "NativePath": "AC",
                "IconName": "ac-adapter-symbolic",
            },
        )
        self.manager = PropertySet(
            service,
            UPOWER_PATH,
            UPOWER,
            {"OnBattery": "b", "LidIsPresent": "b", "DaemonVersion": "s"},
            {"OnBattery": False, "LidIsPresent": battery, "DaemonVersion": "1.90.0"},
        )
        for device in (self.display, self.battery, self.ac):
            device.serve()
        self.manager.serve(
            {
                "EnumerateDevices": lambda _: Reply("ao", (self.device_paths(),)),
                "GetDisplayDevice": lambda _: Reply("o", (DISPLAY_PATH,)),
                "GetCriticalAction": lambda _: Reply("s", ("PowerOff",)),
            },
            UPOWER_XML,
        )
        control = PropertySet(service, CONTROL_PATH, CONTROL_INTERFACE, {}, {})
        control.serve({"Update": self.update}, UPDATE_XML, recorded=False)

    def device_paths(self) -> list[str]:
        return [AC_PATH, BATTERY_PATH] if self.battery_present else [AC_PATH]

    def update(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        changes = check_update(msg, UPDATE_KEYS)
        if isinstance(changes, Failure):
            return changes
        if not 0 <= changes.get("Percentage", 0) <= 100:
            return Failure(
                "org.freedesktop.DBus.Error.InvalidArgs",
                f"Update: Percentage {changes['Percentage']} is not within 0..100",
            )
        was_present = self.battery_present
        self.battery_present = changes.get("Battery", self.battery_present)
        self.percentage = changes.get("Percentage", self.percentage)
        self.state = changes.get("State", self.state)
        if "OnBattery" in changes:
            on_battery = changes["OnBattery"]
            self.ac.set({"Online": not on_battery})
            self.manager.set({"OnBattery": on_battery})
            if "State" not in changes:  # what a laptop does when it is (un)plugged
                if on_battery:
                    self.state = DISCHARGING
                else:
                    self.state = FULLY_CHARGED if self.percentage >= 100 else CHARGING
        values = battery_values(self.percentage, self.state, self.battery_present)
        self.battery.set(values)
        self.display.set(values)
        if self.battery_present != was_present:
            self.manager.set({"LidIsPresent": self.battery_present})
            member = "DeviceAdded" if self.battery_present else "DeviceRemoved"
            self.service.emit(UPOWER_PATH, UPOWER, member, "o", (BATTERY_PATH,))
        return sent_at(started)


def main() -> None:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--no-battery", action="store_true", help="start without a battery")

    serve(
        __doc__, [UPOWER], lambda service, args: FakeUPower(service, battery=not args.no_battery),
        options=options,
    )  # fmt: skip


if __name__ == "__main__":
    main()
