"""The session and disk sources of Windows and macOS at their boundary: the hidden windows' procedures fed the
messages Windows sends (through a fake user32 calling the real ctypes procedure), the disks read
through a fake kernel32, and the macOS unlock observer through a fake notification center. What
Windows itself delivers is the Wine stage's (tests/windows)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from domi_desktop.model import Volume
from domi_desktop.platform.conditions.macvolumes import DID_MOUNT, DID_UNMOUNT, MacVolumeReader
from domi_desktop.platform.conditions.winvolumes import (
    DBT_DEVICEARRIVAL,
    DBT_DEVICEREMOVECOMPLETE,
    DBT_DEVTYP_VOLUME,
    DEV_BROADCAST_HDR,
    WM_DEVICECHANGE,
    WindowsVolumeReader,
    is_volume_change,
    serial_text,
)
from domi_desktop.platform.session import unlock_source_for_platform
from domi_desktop.platform.session.macos import SCREEN_UNLOCKED, ScreenUnlockSource
from domi_desktop.platform.session.windows import (
    NOTIFY_FOR_THIS_SESSION,
    WM_WTSSESSION_CHANGE,
    WTS_SESSION_LOCK,
    WTS_SESSION_UNLOCK,
    SessionWindowUnlockSource,
)
from tests.unit.platform.fakes import FakeUser32

DBT_DEVTYP_PORT = 0x3


class FakeWtsApi32:
    def __init__(self, refuses: bool = False) -> None:
        self.registered: list[tuple[int, int]] = []
        self.unregistered: list[int] = []
        self.refuses = refuses

    def WTSRegisterSessionNotification(self, hwnd: int, flags: int, /) -> int:
        self.registered.append((hwnd, flags))
        return 0 if self.refuses else 1

    def WTSUnRegisterSessionNotification(self, hwnd: int, /) -> int:
        self.unregistered.append(hwnd)
        return 1


def test_an_unlock_of_this_session_is_reported_and_a_lock_is_not() -> None:
    user32, wts = FakeUser32(), FakeWtsApi32()
    source = SessionWindowUnlockSource(platform="win32", user32=user32, wtsapi32=wts)
    unlocks: list[str] = []
    assert source.start(lambda: unlocks.append("unlock"))
    assert wts.registered == [(FakeUser32.HWND, NOTIFY_FOR_THIS_SESSION)]
    assert source.status == "listening to WTS_SESSION_UNLOCK (hidden window)"
    user32.send(WM_WTSSESSION_CHANGE, WTS_SESSION_LOCK)
    user32.send(WM_WTSSESSION_CHANGE, WTS_SESSION_UNLOCK)
    user32.send(WM_DEVICECHANGE, WTS_SESSION_UNLOCK)
    assert unlocks == ["unlock"]
    assert user32.default_calls == [WM_WTSSESSION_CHANGE, WM_DEVICECHANGE]
    source.stop()
    assert wts.unregistered == [FakeUser32.HWND] and user32.windows == {}


def test_a_refused_registration_leaves_no_window_and_says_why() -> None:
    user32 = FakeUser32()
    source = SessionWindowUnlockSource(
        platform="win32", user32=user32, wtsapi32=FakeWtsApi32(refuses=True)
    )
    assert not source.start(lambda: None)
    assert source.status == "WTSRegisterSessionNotification refused the window"
    assert user32.windows == {} and user32.classes == {}


def test_off_windows_the_windows_sources_say_why() -> None:
    unlock = SessionWindowUnlockSource(platform="linux")
    assert not unlock.start(lambda: None)
    assert "only on Windows" in unlock.status
    disks = WindowsVolumeReader(platform="linux")
    assert not disks.start(lambda: None) and disks.read() == ()


def broadcast(kind: int) -> DEV_BROADCAST_HDR:
    return DEV_BROADCAST_HDR(ctypes.sizeof(DEV_BROADCAST_HDR), kind, 0)


def test_only_a_volume_arriving_or_going_is_a_disk_change() -> None:
    volume, port = broadcast(DBT_DEVTYP_VOLUME), broadcast(DBT_DEVTYP_PORT)
    address = ctypes.addressof
    assert is_volume_change(WM_DEVICECHANGE, DBT_DEVICEARRIVAL, address(volume))
    assert is_volume_change(WM_DEVICECHANGE, DBT_DEVICEREMOVECOMPLETE, address(volume))
    assert not is_volume_change(WM_DEVICECHANGE, DBT_DEVICEARRIVAL, address(port))
    assert not is_volume_change(WM_DEVICECHANGE, 0x0007, 0)  # DBT_DEVNODES_CHANGED, no header
    assert not is_volume_change(WM_WTSSESSION_CHANGE, DBT_DEVICEARRIVAL, address(volume))


def test_the_device_window_reports_a_volume_and_answers_true() -> None:
    user32 = FakeUser32()
    reader = WindowsVolumeReader(platform="win32", user32=user32, kernel32=FakeKernel32({}))
    changes: list[str] = []
    assert reader.start(lambda: changes.append("changed"))
    volume = broadcast(DBT_DEVTYP_VOLUME)
    assert user32.send(WM_DEVICECHANGE, DBT_DEVICEARRIVAL, ctypes.addressof(volume)) == 1
    assert changes == ["changed"]
    reader.stop()
    assert user32.windows == {}


class FakeKernel32:
    """Drives by letter: (label, serial), or None for a letter with no volume in it."""

    def __init__(self, drives: dict[str, tuple[str, int] | None]) -> None:
        self.drives = drives

    def GetLogicalDrives(self, /) -> int:
        return sum(1 << (ord(letter) - ord("A")) for letter in self.drives)

    def GetDriveTypeW(self, root: str, /) -> int:
        return 2  # DRIVE_REMOVABLE

    def GetVolumeInformationW(
        self, root: str, label: Any, size: int, serial: Any, *rest: Any
    ) -> int:
        found = self.drives[root[0]]
        if found is None:
            return 0  # an empty card reader: ERROR_NOT_READY
        label.value = found[0]
        serial.contents.value = found[1]
        return 1


def test_the_drives_are_read_with_their_labels_and_serials() -> None:
    kernel = FakeKernel32({"C": ("Windows", 0x1A2B3C4D), "E": ("Backup", 0x1234ABCD), "F": None})
    reader = WindowsVolumeReader(platform="win32", kernel32=kernel)
    assert reader.read() == (
        Volume("Windows", "1A2B-3C4D", "C:\\"),
        Volume("Backup", "1234-ABCD", "E:\\"),
    )
    assert serial_text(0x0000_00FF) == "0000-00FF"


class FakeNotification:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class FakeCenter:
    def __init__(self) -> None:
        self.blocks: dict[str, Callable[[Any], None]] = {}

    def addObserverForName_object_queue_usingBlock_(
        self, name: str, sender: object, queue: object, block: Callable[[Any], None], /
    ) -> object:
        self.blocks[name] = block
        return name

    def removeObserver_(self, observer: object, /) -> None:
        self.blocks.pop(str(observer))

    def postNotificationName_object_(self, name: str, sender: object, /) -> None:
        self.blocks[name](FakeNotification(name))


def test_the_macos_unlock_observer() -> None:
    center = FakeCenter()
    source = ScreenUnlockSource(center, queue=object())
    unlocks: list[str] = []
    assert source.start(lambda: unlocks.append("unlock"))
    center.postNotificationName_object_(SCREEN_UNLOCKED, None)
    assert unlocks == ["unlock"]
    source.stop()
    assert center.blocks == {}


def test_each_platform_has_its_unlock_source() -> None:
    assert type(unlock_source_for_platform("win32")).__name__ == "SessionWindowUnlockSource"
    assert type(unlock_source_for_platform("darwin")).__name__ == "ScreenUnlockSource"
    other = unlock_source_for_platform("sunos5")
    assert not other.start(lambda: None) and "sunos5" in other.status


def test_the_macos_disks_under_volumes_and_their_mount_notices() -> None:
    listed = [
        ("Macintosh HD", "0F1E2D3C-0000-4000-8000-000000000001", "/"),
        ("Backup", "6B29FC40-CA47-1067-B31D-00DD010662DA", "/Volumes/Backup"),
    ]
    center = FakeCenter()
    reader = MacVolumeReader(lambda: listed, center)
    assert reader.read() == (
        Volume("Backup", "6B29FC40-CA47-1067-B31D-00DD010662DA", "/Volumes/Backup"),
    )
    changes: list[str] = []
    assert reader.start(lambda: changes.append("changed"))
    center.postNotificationName_object_(DID_MOUNT, None)
    center.postNotificationName_object_(DID_UNMOUNT, None)
    assert changes == ["changed", "changed"]
    reader.stop()
    assert center.blocks == {}


def test_a_listing_that_fails_is_no_disk_and_says_why() -> None:
    def broken() -> list[tuple[str, str, str]]:
        raise ImportError("No module named 'Foundation'")

    reader = MacVolumeReader(broken)
    assert reader.read() == ()
    assert reader.status == "cannot list the disks: No module named 'Foundation'"
