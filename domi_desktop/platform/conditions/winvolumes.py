"""Windows disks: the drive letters (``GetLogicalDrives``) with each volume's label and serial
number (``GetVolumeInformationW``; the serial is what ``vol`` and ``UUID=`` show, ``1234-ABCD``),
and ``WM_DEVICECHANGE`` (``DBT_DEVICEARRIVAL`` / ``DBT_DEVICEREMOVECOMPLETE`` of a volume), which
Windows sends to every top-level window: a hidden one of ours, while started.

Importable on every OS; tests inject fakes of ``kernel32`` and ``user32``.
"""

from __future__ import annotations

import ctypes
import string
import sys
from collections.abc import Callable
from typing import Protocol

from domi_desktop.ffi import Signature, load_windows
from domi_desktop.model import Volume
from domi_desktop.platform.resume.windows import User32, _load_user32
from domi_desktop.platform.winwindow import HiddenWindow

WM_DEVICECHANGE = 0x0219
DBT_DEVICEARRIVAL = 0x8000
DBT_DEVICEREMOVECOMPLETE = 0x8004
DBT_DEVTYP_VOLUME = 0x2
DRIVE_NO_ROOT_DIR = 1
MAX_PATH = 261


class DEV_BROADCAST_HDR(ctypes.Structure):
    """dbt.h's header of every ``WM_DEVICECHANGE`` broadcast."""

    _fields_ = (
        ("dbch_size", ctypes.c_uint32),
        ("dbch_devicetype", ctypes.c_uint32),
        ("dbch_reserved", ctypes.c_uint32),
    )


class Kernel32(Protocol):
    def GetLogicalDrives(self, /) -> int: ...

    def GetDriveTypeW(self, root: str, /) -> int: ...

    def GetVolumeInformationW(
        self,
        root: str,
        label: ctypes.Array[ctypes.c_wchar],
        label_size: int,
        serial: ctypes._Pointer[ctypes.c_uint32],
        max_component: object,
        flags: object,
        filesystem: ctypes.Array[ctypes.c_wchar],
        filesystem_size: int,
        /,
    ) -> int: ...


_TEXT, _DWORD, _ANY = ctypes.c_wchar_p, ctypes.c_uint32, ctypes.c_void_p
_SERIAL = ctypes.POINTER(_DWORD)
KERNEL32: dict[str, Signature] = {
    "GetLogicalDrives": ((), _DWORD),
    "GetDriveTypeW": ((_TEXT,), ctypes.c_uint32),
    "GetVolumeInformationW": (
        (_TEXT, _TEXT, _DWORD, _SERIAL, _ANY, _ANY, _TEXT, _DWORD),
        ctypes.c_int32,
    ),
}


def serial_text(serial: int) -> str:
    return f"{serial >> 16:04X}-{serial & 0xFFFF:04X}"


def is_volume_change(message: int, wparam: int, lparam: int) -> bool:
    """A volume arrived or went (``lparam`` points to a ``DEV_BROADCAST_HDR``)."""
    if message != WM_DEVICECHANGE or wparam not in (DBT_DEVICEARRIVAL, DBT_DEVICEREMOVECOMPLETE):
        return False
    if not lparam:
        return False
    header = ctypes.cast(lparam, ctypes.POINTER(DEV_BROADCAST_HDR)).contents
    return bool(header.dbch_devicetype == DBT_DEVTYP_VOLUME)


class WindowsVolumeReader:
    def __init__(
        self,
        *,
        platform: str = sys.platform,
        kernel32: Kernel32 | None = None,
        user32: User32 | None = None,
    ) -> None:
        self.status = "not started"
        self._platform = platform
        self._kernel32 = kernel32
        self._user32 = user32
        self._window: HiddenWindow | None = None
        self._on_change: Callable[[], None] | None = None

    def _kernel(self) -> Kernel32 | None:
        if self._kernel32 is None and self._platform == "win32":
            try:
                self._kernel32 = load_windows("kernel32", KERNEL32)
            except OSError as error:
                self.status = f"kernel32 cannot be loaded, so no disks: {error}"
        return self._kernel32

    def read(self) -> tuple[Volume, ...]:
        kernel = self._kernel()
        if kernel is None:
            return ()
        drives = kernel.GetLogicalDrives()
        found: list[Volume] = []
        for index, letter in enumerate(string.ascii_uppercase):
            if not drives & (1 << index):
                continue
            root = f"{letter}:\\"
            if kernel.GetDriveTypeW(root) == DRIVE_NO_ROOT_DIR:
                continue
            label = ctypes.create_unicode_buffer(MAX_PATH)
            filesystem = ctypes.create_unicode_buffer(MAX_PATH)
            serial = ctypes.c_uint32(0)
            if kernel.GetVolumeInformationW(
                root, label, MAX_PATH, ctypes.pointer(serial), None, None, filesystem, MAX_PATH
            ):
                found.append(Volume(label.value, serial_text(serial.value), root))
        return tuple(found)

    def start(self, on_change: Callable[[], None]) -> bool:
        self.stop()
        if self._platform != "win32":
            self.status = f"WM_DEVICECHANGE exists only on Windows, not on {self._platform}"
            return False
        try:
            user32 = self._user32 or _load_user32()
        except OSError as error:
            self.status = f"user32.dll cannot be loaded, so no disk changes: {error}"
            return False
        self._user32 = user32
        window = HiddenWindow("devices", self._message, user32)
        problem = window.open()
        if problem is not None:
            self.status = problem
            return False
        self._window = window
        self._on_change = on_change
        self.status = "listening to WM_DEVICECHANGE (hidden window)"
        return True

    def stop(self) -> None:
        if self._window is not None:
            self._window.close()
        self._window = None
        self._on_change = None

    def _message(self, message: int, wparam: int, lparam: int) -> int | None:
        if is_volume_change(message, wparam, lparam) and self._on_change is not None:
            self._on_change()
            return 1  # TRUE: the only answer WM_DEVICECHANGE reads
        return None
