"""Wi-Fi names on Windows (the WLAN API) and macOS (CoreWLAN), at their boundary: Windows's
structures parsed from their real byte layouts, the DLL and the pyobjc objects faked."""

from __future__ import annotations

import ctypes
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from domi_desktop.model import Conditions, SystemState, Wanted
from domi_desktop.platform.conditions import resource_readers_for_platform
from domi_desktop.platform.conditions.base import NetworkReading
from domi_desktop.platform.conditions.macwifi import CoreWlanNames, WiFiInterface
from domi_desktop.platform.conditions.resources import ResourceReaders
from domi_desktop.platform.conditions.wifinames import NO_LOCATION, WifiNames
from domi_desktop.platform.conditions.winwlan import (
    CONNECTED,
    CURRENT_CONNECTION,
    ERROR_SERVICE_NOT_ACTIVE,
    WlanNames,
    interfaces_from,
    ssid_from,
)
from domi_desktop.scheduler.conditions import describe_gate, gate

START = datetime(2024, 6, 5, 9, 0, tzinfo=UTC)
OFFICE = uuid.UUID("6b29fc40-ca47-1067-b31d-00dd010662da")
DOCK = uuid.UUID("0e5c3b5a-1111-4222-8333-944455556666")
DISCONNECTED = 4


def wide(text: str) -> bytes:
    """A WCHAR[256] as Windows lays it out: UTF-16LE, zero-filled."""
    return text.encode("utf-16-le").ljust(512, b"\0")


def interface_list(*interfaces: tuple[uuid.UUID, str, int]) -> bytes:
    """wlanapi.h's WLAN_INTERFACE_INFO_LIST: two DWORDs, then per interface its GUID (16), its
    description (WCHAR[256]) and its state (DWORD): 532 bytes each."""
    raw = struct.pack("<II", len(interfaces), 0)
    for guid, description, state in interfaces:
        raw += guid.bytes_le + wide(description) + struct.pack("<I", state)
    return raw


def connection(ssid: bytes, profile: str = "profile") -> bytes:
    """wlanapi.h's WLAN_CONNECTION_ATTRIBUTES: 604 bytes, its SSID at offset 520."""
    association = (
        struct.pack("<I", len(ssid)) + ssid.ljust(32, b"\0")
        + struct.pack("<I", 1) + bytes.fromhex("a0b1c2d3e4f5") + b"\0\0"
        + struct.pack("<IIIII", 7, 0, 80, 866700, 866700)
    )  # fmt: skip
    security = struct.pack("<iiII", 1, 0, 7, 4)
    return struct.pack("<II", CONNECTED, 0) + wide(profile) + association + security


def test_the_structures_are_parsed_from_windows_bytes() -> None:
    assert len(connection(b"Office")) == 604
    assert ssid_from(connection("Café".encode(), profile="another name")) == "Café"
    listed = interfaces_from(
        interface_list((OFFICE, "Intel Wi-Fi 6 AX201", CONNECTED), (DOCK, "USB", DISCONNECTED))
    )
    assert [(bytes(g), state) for g, state in listed] == [
        (OFFICE.bytes_le, CONNECTED),
        (DOCK.bytes_le, DISCONNECTED),
    ]


def _out(argument: object) -> ctypes.c_void_p:
    """The ``c_void_p`` a ``byref`` argument points to, as the DLL writes through it."""
    target = getattr(argument, "_obj")  # noqa: B009  (byref's object has no public name)
    assert isinstance(target, ctypes.c_void_p)
    return target


class FakeWlanapi:
    """wlanapi.dll: memory it hands out lives in buffers until ``WlanFreeMemory``."""

    HANDLE = 0x5A17

    def __init__(self, interfaces: bytes, connections: dict[bytes, bytes], open_error: int = 0):
        self.interfaces = interfaces
        self.connections = connections
        self.open_error = open_error
        self.live: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.opened = self.closed = 0
        self.asked: list[tuple[bytes, int]] = []

    def _hand_out(self, raw: bytes, out: object) -> None:
        buffer = ctypes.create_string_buffer(raw, len(raw))
        self.live[ctypes.addressof(buffer)] = buffer
        _out(out).value = ctypes.addressof(buffer)

    def WlanOpenHandle(
        self, version: int, reserved: None, negotiated: object, handle: object, /
    ) -> int:
        if self.open_error:
            return self.open_error
        self.opened += 1
        _out(handle).value = self.HANDLE
        return 0

    def WlanEnumInterfaces(self, handle: ctypes.c_void_p, reserved: None, out: object, /) -> int:
        assert handle.value == self.HANDLE
        self._hand_out(self.interfaces, out)
        return 0

    def WlanQueryInterface(
        self, handle: ctypes.c_void_p, guid: object, opcode: int, reserved: None,
        size: object, out: object, value_type: None, /,
    ) -> int:  # fmt: skip
        key = bytes(getattr(guid, "_obj"))  # noqa: B009
        self.asked.append((key, opcode))
        raw = self.connections[key]
        getattr(size, "_obj").value = len(raw)  # noqa: B009
        self._hand_out(raw, out)
        return 0

    def WlanFreeMemory(self, memory: ctypes.c_void_p, /) -> None:
        del self.live[memory.value or 0]

    def WlanCloseHandle(self, handle: ctypes.c_void_p, reserved: None, /) -> int:
        assert handle.value == self.HANDLE
        self.closed += 1
        return 0


def test_the_connected_interfaces_ssid_is_read_and_all_is_given_back() -> None:
    api = FakeWlanapi(
        interface_list((OFFICE, "Intel Wi-Fi", CONNECTED), (DOCK, "USB Wi-Fi", DISCONNECTED)),
        {OFFICE.bytes_le: connection(b"Office")},
    )
    assert WlanNames(platform="win32", wlanapi=api)() == frozenset({"Office"})
    assert api.asked == [(OFFICE.bytes_le, CURRENT_CONNECTION)], "a disconnected one not asked"
    assert api.live == {}, "every list and connection freed"
    assert (api.opened, api.closed) == (1, 1)


class Medium:
    """Qt's network signals as the names' source of changes."""

    status = "fake network information"

    def __init__(self) -> None:
        self.on_change: Callable[[], None] | None = None

    def read(self) -> NetworkReading:
        return NetworkReading()

    def start(self, on_change: Callable[[], None]) -> bool:
        self.on_change = on_change
        return True

    def stop(self) -> None:
        self.on_change = None


def test_without_the_wlan_service_a_wired_machine_is_on_ethernet_and_says_why() -> None:
    api = FakeWlanapi(b"", {}, open_error=ERROR_SERVICE_NOT_ACTIVE)
    names = WifiNames(WlanNames(platform="win32", wlanapi=api), wired=lambda: True)
    assert names.read() == frozenset({"ethernet"})
    assert "WLAN AutoConfig service is not running" in names.status


class Named:
    hidden = False

    def __call__(self) -> frozenset[str]:
        return frozenset({"Office"})


def test_a_change_of_network_is_told_through_qts_signals() -> None:
    medium, told = Medium(), []
    names = WifiNames(Named(), wired=lambda: False, changes=medium)
    assert names.start(lambda: told.append(1))
    assert medium.on_change is not None
    medium.on_change()
    assert told == [1]
    names.stop()
    assert medium.on_change is None


class Interface:
    def __init__(self, ssid: str | None, channel: object | None) -> None:
        self._ssid, self._channel = ssid, channel

    def ssid(self) -> str | None:
        return self._ssid

    def wlanChannel(self) -> object | None:
        return self._channel


class Client:
    def __init__(self, interface: WiFiInterface | None) -> None:
        self._interface = interface

    def interface(self) -> WiFiInterface | None:
        return self._interface


@pytest.mark.parametrize(
    ("interface", "names"),
    [
        (Interface("Office", channel=36), {"Office"}),
        (Interface(None, channel=None), set()),  # not associated
        (None, set()),  # no Wi-Fi hardware
    ],
)
def test_corewlan_gives_the_name(interface: Interface | None, names: set[str]) -> None:
    assert CoreWlanNames(Client(interface))() == frozenset(names)


def test_macos_without_location_permission_the_waiting_run_says_so() -> None:
    names = WifiNames(CoreWlanNames(Client(Interface(None, channel=36))), wired=lambda: False)
    readers = ResourceReaders(names=names)
    readers.want(Wanted(network_names=True))
    state = readers.read(SystemState())
    assert state.network_names == frozenset() and state.network_names_hidden
    assert names.status == NO_LOCATION
    verdict = gate(Conditions(network_name="Office"), "command", state, START, START, None)
    assert describe_gate(verdict) == (
        "waiting for the Office network (macOS tells the Wi-Fi name only to apps allowed "
        "Location Services)"
    )
    told = Client(Interface("Office", channel=36))
    readers.names = WifiNames(CoreWlanNames(told), wired=lambda: False)
    assert not readers.read(SystemState()).network_names_hidden, "allowed: named again"


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_read_network_names(platform: str) -> None:
    assert isinstance(resource_readers_for_platform(platform).names, WifiNames)
