"""The Windows session and disk sources against Windows itself: the hidden windows the unlock source and the
disk reader open through the real user32, found as another program finds them, and the messages
Windows sends them (``WM_WTSSESSION_CHANGE`` posted to their thread's queue, ``WM_DEVICECHANGE``
sent from another thread), which reach them only as Qt's event dispatcher pumps the thread's
messages. Under Wine too (5-20x slower: deadlines only a hang reaches).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from domi_desktop.platform.conditions.winvolumes import (
    DBT_DEVICEARRIVAL,
    DBT_DEVICEREMOVECOMPLETE,
    DBT_DEVTYP_VOLUME,
    DEV_BROADCAST_HDR,
    WM_DEVICECHANGE,
    WindowsVolumeReader,
)
from domi_desktop.platform.session.windows import (
    WM_WTSSESSION_CHANGE,
    WTS_SESSION_LOCK,
    WTS_SESSION_UNLOCK,
    SessionWindowUnlockSource,
)
from tests.windows.test_app_on_windows import post_message, windows_of

pytestmark = pytest.mark.windows_only

PUMPED_MS = 60_000
"""How long a posted message may take to reach the window procedure through Qt's loop."""
DBT_DEVTYP_PORT = 0x3


class DEV_BROADCAST_VOLUME(ctypes.Structure):
    """dbt.h: what Windows points ``lparam`` at for a volume's arrival or removal."""

    _fields_ = (
        ("header", DEV_BROADCAST_HDR),
        ("dbcv_unitmask", ctypes.c_uint32),
        ("dbcv_flags", ctypes.c_uint16),
    )


def broadcast(device_type: int, drive: str = "Q") -> DEV_BROADCAST_VOLUME:
    header = DEV_BROADCAST_HDR(ctypes.sizeof(DEV_BROADCAST_VOLUME), device_type, 0)
    return DEV_BROADCAST_VOLUME(header, 1 << (ord(drive) - ord("A")), 0)


def send_from_another_thread(hwnd: int, wparam: int, header: DEV_BROADCAST_VOLUME) -> list[int]:
    """``WM_DEVICECHANGE`` sent as Windows broadcasts it: from elsewhere, waiting for the answer,
    which comes once the window's thread (Qt's, here) pumps its messages. It cannot be posted (a
    pointer in ``lparam``: ERROR_MESSAGE_SYNC_ONLY). The answer lands in the list returned."""
    from ctypes import wintypes

    user32 = ctypes.WinDLL("user32", use_last_error=True)
    user32.SendMessageTimeoutW.argtypes = (
        wintypes.HWND, wintypes.UINT, wintypes.WPARAM, wintypes.LPARAM, wintypes.UINT,
        wintypes.UINT, ctypes.POINTER(ctypes.c_size_t),
    )  # fmt: skip
    user32.SendMessageTimeoutW.restype = ctypes.c_ssize_t
    answers: list[int] = []

    def send() -> None:
        result = ctypes.c_size_t()
        sent = user32.SendMessageTimeoutW(
            hwnd, WM_DEVICECHANGE, wparam, ctypes.addressof(header), 0, PUMPED_MS,
            ctypes.byref(result),
        )  # fmt: skip
        answers.append(result.value if sent else -ctypes.get_last_error())

    threading.Thread(target=send, daemon=True).start()
    return answers


def only_window(title: str) -> int:
    (hwnd,) = windows_of(os.getpid(), title)
    return hwnd


@pytest.fixture
def unlock_source(qapp: Any) -> Iterator[tuple[SessionWindowUnlockSource, list[str]]]:
    unlocks: list[str] = []
    source = SessionWindowUnlockSource()
    assert source.start(lambda: unlocks.append("unlock")), source.status
    yield source, unlocks
    source.stop()


def test_an_unlock_posted_to_the_session_window_is_reported_and_a_lock_is_not(
    unlock_source: tuple[SessionWindowUnlockSource, list[str]], qtbot: Any
) -> None:
    source, unlocks = unlock_source
    assert source.status == "listening to WTS_SESSION_UNLOCK (hidden window)"
    hwnd = only_window("domi-desktop session")
    post_message(hwnd, WM_WTSSESSION_CHANGE, WTS_SESSION_LOCK, 1)
    post_message(hwnd, WM_WTSSESSION_CHANGE, WTS_SESSION_UNLOCK, 1)
    qtbot.waitUntil(lambda: unlocks != [], timeout=PUMPED_MS)
    assert unlocks == ["unlock"]  # the lock before it was pumped first, and told nobody
    source.stop()
    assert windows_of(os.getpid(), "domi-desktop session") == []


def test_the_disks_are_the_drive_letters_with_their_volumes() -> None:
    volumes = WindowsVolumeReader().read()
    system = next(volume for volume in volumes if volume.mount_point == "C:\\")
    serial = system.uuid
    assert len(serial) == 9 and serial[4] == "-" and int(serial.replace("-", ""), 16) != 0


def test_a_volume_broadcast_to_the_devices_window_is_a_change_and_another_device_is_not(
    qapp: Any, qtbot: Any
) -> None:
    changes: list[str] = []
    reader = WindowsVolumeReader()
    assert reader.start(lambda: changes.append("change")), reader.status
    try:
        hwnd = only_window("domi-desktop devices")
        port = send_from_another_thread(hwnd, DBT_DEVICEARRIVAL, broadcast(DBT_DEVTYP_PORT))
        qtbot.waitUntil(lambda: port != [], timeout=PUMPED_MS)
        assert changes == []  # a port is no disk
        arrival = send_from_another_thread(hwnd, DBT_DEVICEARRIVAL, broadcast(DBT_DEVTYP_VOLUME))
        qtbot.waitUntil(lambda: arrival != [], timeout=PUMPED_MS)
        assert (arrival, changes) == ([1], ["change"])  # TRUE: the answer WM_DEVICECHANGE reads
        removal = send_from_another_thread(
            hwnd, DBT_DEVICEREMOVECOMPLETE, broadcast(DBT_DEVTYP_VOLUME)
        )
        qtbot.waitUntil(lambda: removal != [], timeout=PUMPED_MS)
        assert (removal, changes) == ([1], ["change", "change"])
    finally:
        reader.stop()
    assert windows_of(os.getpid(), "domi-desktop devices") == []
