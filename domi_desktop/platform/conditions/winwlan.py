"""Windows Wi-Fi names through the WLAN API (wlanapi.dll): each connected interface
(``WlanEnumInterfaces``) asked for its connection (``WlanQueryInterface`` with
``wlan_intf_opcode_current_connection``), whose ``wlanAssociationAttributes.dot11Ssid`` is the
network's name. What the API allocates goes back through ``WlanFreeMemory``, the handle through
``WlanCloseHandle``.

The structures are parsed from their bytes, with WCHAR as 2 bytes (``c_wchar`` is 4 on Linux),
so tests parse Windows's real layouts anywhere. Importable on every OS; tests inject a fake DLL.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Protocol

from domi_desktop.ffi import Signature, load_windows

WLAN_API_VERSION_2 = 2
CURRENT_CONNECTION = 7
"""``wlan_intf_opcode_current_connection``."""
CONNECTED = 1
"""``wlan_interface_state_connected``."""
ERROR_SUCCESS = 0
ERROR_SERVICE_NOT_ACTIVE = 1062

_WCHARS = ctypes.c_uint16 * 256
_DWORD = ctypes.c_uint32


class GUID(ctypes.Structure):
    _fields_ = (
        ("Data1", ctypes.c_uint32),
        ("Data2", ctypes.c_uint16),
        ("Data3", ctypes.c_uint16),
        ("Data4", ctypes.c_uint8 * 8),
    )


class WLAN_INTERFACE_INFO(ctypes.Structure):
    _fields_ = (
        ("InterfaceGuid", GUID),
        ("strInterfaceDescription", _WCHARS),
        ("isState", _DWORD),
    )


class WLAN_INTERFACE_INFO_LIST(ctypes.Structure):
    """The list's head; ``dwNumberOfItems`` ``WLAN_INTERFACE_INFO`` follow it."""

    _fields_ = (("dwNumberOfItems", _DWORD), ("dwIndex", _DWORD))


class DOT11_SSID(ctypes.Structure):
    _fields_ = (("uSSIDLength", _DWORD), ("ucSSID", ctypes.c_uint8 * 32))


class WLAN_ASSOCIATION_ATTRIBUTES(ctypes.Structure):
    _fields_ = (
        ("dot11Ssid", DOT11_SSID),
        ("dot11BssType", _DWORD),
        ("dot11Bssid", ctypes.c_uint8 * 6),
        ("dot11PhyType", _DWORD),
        ("uDot11PhyIndex", _DWORD),
        ("wlanSignalQuality", _DWORD),
        ("ulRxRate", _DWORD),
        ("ulTxRate", _DWORD),
    )


class WLAN_SECURITY_ATTRIBUTES(ctypes.Structure):
    _fields_ = (
        ("bSecurityEnabled", ctypes.c_int32),
        ("bOneXEnabled", ctypes.c_int32),
        ("dot11AuthAlgorithm", _DWORD),
        ("dot11CipherAlgorithm", _DWORD),
    )


class WLAN_CONNECTION_ATTRIBUTES(ctypes.Structure):
    _fields_ = (
        ("isState", _DWORD),
        ("wlanConnectionMode", _DWORD),
        ("strProfileName", _WCHARS),
        ("wlanAssociationAttributes", WLAN_ASSOCIATION_ATTRIBUTES),
        ("wlanSecurityAttributes", WLAN_SECURITY_ATTRIBUTES),
    )


_OUT = ctypes.POINTER(ctypes.c_void_p)
WLANAPI: dict[str, Signature] = {
    "WlanOpenHandle": ((_DWORD, ctypes.c_void_p, ctypes.POINTER(_DWORD), _OUT), _DWORD),
    "WlanEnumInterfaces": ((ctypes.c_void_p, ctypes.c_void_p, _OUT), _DWORD),
    "WlanQueryInterface": (
        (
            ctypes.c_void_p,
            ctypes.POINTER(GUID),
            _DWORD,
            ctypes.c_void_p,
            ctypes.POINTER(_DWORD),
            _OUT,
            ctypes.POINTER(_DWORD),
        ),
        _DWORD,
    ),
    "WlanFreeMemory": ((ctypes.c_void_p,), None),
    "WlanCloseHandle": ((ctypes.c_void_p, ctypes.c_void_p), _DWORD),
}


class Wlanapi(Protocol):
    def WlanOpenHandle(
        self, version: int, reserved: None, negotiated: object, handle: object, /
    ) -> int: ...

    def WlanEnumInterfaces(
        self, handle: ctypes.c_void_p, reserved: None, out: object, /
    ) -> int: ...

    def WlanQueryInterface(
        self,
        handle: ctypes.c_void_p,
        guid: object,
        opcode: int,
        reserved: None,
        size: object,
        out: object,
        value_type: None,
        /,
    ) -> int: ...

    def WlanFreeMemory(self, memory: ctypes.c_void_p, /) -> None: ...

    def WlanCloseHandle(self, handle: ctypes.c_void_p, reserved: None, /) -> int: ...


def interfaces_from(raw: bytes) -> list[tuple[GUID, int]]:
    """A ``WLAN_INTERFACE_INFO_LIST``'s interfaces: (GUID, state)."""
    head = WLAN_INTERFACE_INFO_LIST.from_buffer_copy(raw[: ctypes.sizeof(WLAN_INTERFACE_INFO_LIST)])
    size, found = ctypes.sizeof(WLAN_INTERFACE_INFO), []
    for index in range(head.dwNumberOfItems):
        at = ctypes.sizeof(WLAN_INTERFACE_INFO_LIST) + index * size
        info = WLAN_INTERFACE_INFO.from_buffer_copy(raw[at : at + size])
        found.append((info.InterfaceGuid, int(info.isState)))
    return found


def ssid_from(raw: bytes) -> str:
    """A ``WLAN_CONNECTION_ATTRIBUTES``'s network name (an SSID is bytes, UTF-8 by custom)."""
    attributes = WLAN_CONNECTION_ATTRIBUTES.from_buffer_copy(raw)
    ssid = attributes.wlanAssociationAttributes.dot11Ssid
    length = min(int(ssid.uSSIDLength), len(ssid.ucSSID))
    return bytes(ssid.ucSSID[:length]).decode("utf-8", "replace")


def _list_bytes(address: int) -> bytes:
    head = WLAN_INTERFACE_INFO_LIST.from_address(address)
    total = ctypes.sizeof(head) + head.dwNumberOfItems * ctypes.sizeof(WLAN_INTERFACE_INFO)
    return ctypes.string_at(address, total)


def _check(error: int, call: str) -> None:
    if error == ERROR_SERVICE_NOT_ACTIVE:
        raise OSError(f"{call}: the WLAN AutoConfig service is not running (no Wi-Fi here)")
    if error != ERROR_SUCCESS:
        raise OSError(f"{call} failed with error {error}")


class WlanNames:
    """The names of the Wi-Fi networks the machine is connected to (``WifiRead``)."""

    hidden = False

    def __init__(self, *, platform: str = sys.platform, wlanapi: Wlanapi | None = None) -> None:
        self._platform = platform
        self._api = wlanapi

    def _load(self) -> Wlanapi:
        if self._api is None:
            if self._platform != "win32":
                raise OSError(f"the WLAN API exists only on Windows, not on {self._platform}")
            self._api = load_windows("wlanapi", WLANAPI)
        return self._api

    def __call__(self) -> frozenset[str]:
        api = self._load()
        negotiated, handle = _DWORD(), ctypes.c_void_p()
        _check(
            api.WlanOpenHandle(
                WLAN_API_VERSION_2, None, ctypes.byref(negotiated), ctypes.byref(handle)
            ),
            "WlanOpenHandle",
        )
        try:
            listing = ctypes.c_void_p()
            _check(
                api.WlanEnumInterfaces(handle, None, ctypes.byref(listing)), "WlanEnumInterfaces"
            )
            try:
                interfaces = interfaces_from(_list_bytes(listing.value or 0))
            finally:
                api.WlanFreeMemory(listing)
            return frozenset(
                name
                for guid, state in interfaces
                if state == CONNECTED and (name := self._ssid(api, handle, guid))
            )
        finally:
            api.WlanCloseHandle(handle, None)

    @staticmethod
    def _ssid(api: Wlanapi, handle: ctypes.c_void_p, guid: GUID) -> str:
        size, data = _DWORD(), ctypes.c_void_p()
        error = api.WlanQueryInterface(
            handle, ctypes.byref(guid), CURRENT_CONNECTION, None,
            ctypes.byref(size), ctypes.byref(data), None,
        )  # fmt: skip
        if error != ERROR_SUCCESS or not data.value:
            return ""  # disconnected between the two calls
        try:
            wanted = ctypes.sizeof(WLAN_CONNECTION_ATTRIBUTES)
            return ssid_from(ctypes.string_at(data.value, min(wanted, size.value or wanted)))
        finally:
            api.WlanFreeMemory(data)
