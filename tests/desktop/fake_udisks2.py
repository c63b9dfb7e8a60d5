"""A fake UDisks2: `org.freedesktop.UDisks2` on the private "system" bus.

    python tests/desktop/fake_udisks2.py [--address ADDRESS] [--log calls.jsonl]

Serves the ObjectManager at /org/freedesktop/UDisks2 (`GetManagedObjects() ->
a{oa{sa{sv}}}`, signals `InterfacesAdded(o, a{sa{sv}})` and `InterfacesRemoved(o, as)`), the
manager at /org/freedesktop/UDisks2/Manager (`GetBlockDevices(a{sv}) -> ao`, `Version` s) and one
object per plugged disk at /org/freedesktop/UDisks2/block_devices/<name> with the interfaces
org.freedesktop.UDisks2.Block (`IdLabel` s, `IdUUID` s, `IdType` s, `Device` ay,
`HintSystem` b) and org.freedesktop.UDisks2.Filesystem (`MountPoints` aay: NUL-terminated
byte strings), as UDisks2 2.9 does. A mount or unmount is announced as PropertiesChanged of
`MountPoints` on the disk's object, as the real daemon does. Starts with the system's own disk
(label "root", mounted at /), which no test waits for.

Control (not recorded), interface `org.domi.Test` at /org/domi/Test on the same name; each
returns the time.monotonic() at which its signal was sent:
  Plug(s name, s label, s uuid) -> d     a disk appears, not mounted (InterfacesAdded)
  Mount(s name, s mount_point) -> d      it is mounted there
  Unmount(s name) -> d
  Unplug(s name) -> d                    it goes (unmounted first if it was: InterfacesRemoved)
"""

from __future__ import annotations

import time
from typing import Any

# Run as a script, this directory is sys.path[0]: the shared framework is a sibling module.
from fakebus import (
    CONTROL_PATH,
    BusService,
    Failure,
    Interface,
    Reply,
    control_interface,
    serve,
)
from fakeprops import PropertySet, sent_at
from jeepney import Message

UDISKS = "org.freedesktop.UDisks2"
UDISKS_PATH = "/org/freedesktop/UDisks2"
MANAGER_PATH = f"{UDISKS_PATH}/Manager"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
BLOCK = "org.freedesktop.UDisks2.Block"
FILESYSTEM = "org.freedesktop.UDisks2.Filesystem"
MANAGER = "org.freedesktop.UDisks2.Manager"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"

BLOCK_SIGNATURES = {"IdLabel": "s", "IdUUID": "s", "IdType": "s", "Device": "ay", "HintSystem": "b"}
FILESYSTEM_SIGNATURES = {"MountPoints": "aay"}

OBJECT_MANAGER_XML = """
<method name="GetManagedObjects">
  <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
</method>
<signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
<signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
"""
MANAGER_XML = """
<method name="GetBlockDevices">
  <arg name="options" type="a{sv}" direction="in"/><arg name="devices" type="ao" direction="out"/>
</method>
"""
CONTROL_XML = """
<method name="Plug"><arg type="s" direction="in"/><arg type="s" direction="in"/>
  <arg type="s" direction="in"/><arg type="d" direction="out"/></method>
<method name="Mount"><arg type="s" direction="in"/><arg type="s" direction="in"/>
  <arg type="d" direction="out"/></method>
<method name="Unmount"><arg type="s" direction="in"/><arg type="d" direction="out"/></method>
<method name="Unplug"><arg type="s" direction="in"/><arg type="d" direction="out"/></method>
"""


def block_path(name: str) -> str:
    return f"{UDISKS_PATH}/block_devices/{name}"


def bytestring(text: str) -> bytes:
    return text.encode() + b"\0"


class Disk:
    def __init__(self, service: BusService, name: str, label: str, uuid: str) -> None:
        self.path = block_path(name)
        self.block = PropertySet(
            service,
            self.path,
            BLOCK,
            BLOCK_SIGNATURES,
            {
                "IdLabel": label,
                "IdUUID": uuid,
                "IdType": "ext4",
                "Device": bytestring(f"/dev/{name}"),
                "HintSystem": name == "sda1",
            },
        )
        self.filesystem = PropertySet(
            service, self.path, FILESYSTEM, FILESYSTEM_SIGNATURES, {"MountPoints": []}
        )
        self.block.serve()
        self.filesystem.serve()

    def interfaces(self) -> dict[str, dict[str, tuple[str, Any]]]:
        return {
            each.interface: {k: (each.signatures[k], v) for k, v in each.values.items()}
            for each in (self.block, self.filesystem)
        }


class FakeUDisks2:
    def __init__(self, service: BusService) -> None:
        self.service = service
        self.disks: dict[str, Disk] = {}
        service.add_interface(
            UDISKS_PATH,
            Interface(
                OBJECT_MANAGER,
                {"GetManagedObjects": self.managed_objects},
                introspection=OBJECT_MANAGER_XML,
            ),
        )
        manager = PropertySet(
            service, MANAGER_PATH, MANAGER, {"Version": "s"}, {"Version": "2.9.4"}
        )
        manager.serve(
            {"GetBlockDevices": lambda _: Reply("ao", ([d.path for d in self.disks.values()],))},
            MANAGER_XML,
        )
        service.add_interface(
            CONTROL_PATH,
            control_interface(
                {
                    "Plug": self.plug,
                    "Mount": self.mount,
                    "Unmount": self.unmount,
                    "Unplug": self.unplug,
                },
                CONTROL_XML,
            ),
        )
        self._add("sda1", "root", "0000-ROOT")
        self.disks["sda1"].filesystem.values["MountPoints"] = [bytestring("/")]

    def managed_objects(self, _: Message) -> Reply:
        objects = {disk.path: disk.interfaces() for disk in self.disks.values()}
        return Reply("a{oa{sa{sv}}}", (objects,))

    def _add(self, name: str, label: str, uuid: str) -> Disk:
        disk = Disk(self.service, name, label, uuid)
        self.disks[name] = disk
        return disk

    def plug(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        name, label, uuid = msg.body
        if name in self.disks or not name.isalnum():
            return Failure(INVALID_ARGS, f"Plug: {name!r} is plugged already or not a name")
        disk = self._add(name, label, uuid)
        self.service.emit(
            UDISKS_PATH, OBJECT_MANAGER, "InterfacesAdded", "oa{sa{sv}}",
            (disk.path, disk.interfaces()),
        )  # fmt: skip
        return sent_at(started)

    def _disk(self, name: str) -> Disk | Failure:
        disk = self.disks.get(name)
        return disk if disk is not None else Failure(INVALID_ARGS, f"no disk {name!r}")

    def mount(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        name, where = msg.body
        disk = self._disk(name)
        if isinstance(disk, Failure):
            return disk
        disk.filesystem.set({"MountPoints": [bytestring(where)]})
        return sent_at(started)

    def unmount(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        disk = self._disk(msg.body[0])
        if isinstance(disk, Failure):
            return disk
        disk.filesystem.set({"MountPoints": []})
        return sent_at(started)

    def unplug(self, msg: Message) -> Reply | Failure:
        started = time.monotonic()
        disk = self._disk(msg.body[0])
        if isinstance(disk, Failure):
            return disk
        disk.filesystem.set({"MountPoints": []})
        del self.disks[msg.body[0]]
        self.service.objects.pop(disk.path, None)
        self.service.emit(
            UDISKS_PATH,
            OBJECT_MANAGER,
            "InterfacesRemoved",
            "oas",
            (disk.path, [BLOCK, FILESYSTEM]),
        )
        return sent_at(started)


def main() -> None:
    serve(__doc__, [UDISKS], lambda service, _: FakeUDisks2(service))


if __name__ == "__main__":
    main()
