from __future__ import annotations

import ctypes

import pytest
from PySide6.QtCore import QByteArray, QCoreApplication

from domi_desktop.platform.resume.windows import (
    MSG,
    PBT_APMRESUMEAUTOMATIC,
    PBT_APMRESUMESUSPEND,
    PBT_APMSUSPEND,
    WM_POWERBROADCAST,
    PowerBroadcastFilter,
    PowerBroadcastResumeSource,
    decode_power_message,
    read_msg,
)
from domi_desktop.ports import PowerEvent

PBT_APMPOWERSTATUSCHANGE = 0xA
WM_TIMER = 0x0113


def power_msg(wparam: int, message: int = WM_POWERBROADCAST) -> MSG:
    msg = MSG()
    msg.hwnd = 0x10A2C
    msg.message = message
    msg.wParam = wparam
    msg.lParam = -1
    msg.time = 123456
    return msg


@pytest.mark.parametrize(
    ("message", "wparam", "event"),
    [
        (WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC, "resume"),
        (WM_POWERBROADCAST, PBT_APMRESUMESUSPEND, "resume"),
        (WM_POWERBROADCAST, PBT_APMSUSPEND, "sleep"),
        (WM_POWERBROADCAST, PBT_APMPOWERSTATUSCHANGE, None),
        (WM_TIMER, PBT_APMSUSPEND, None),
    ],
)
def test_it_decodes_the_power_messages(message: int, wparam: int, event: str | None) -> None:
    assert decode_power_message(message, wparam) == event


def test_the_msg_structure_has_the_size_of_windows_msg() -> None:
    # sizeof(MSG) of winuser.h without lPrivate: 48 bytes on 64-bit Windows, 28 on 32-bit.
    assert ctypes.sizeof(MSG) == (48 if ctypes.sizeof(ctypes.c_void_p) == 8 else 28)


def test_it_reads_hwnd_message_and_wparam_from_a_real_msg() -> None:
    msg = power_msg(PBT_APMRESUMEAUTOMATIC)
    assert read_msg(ctypes.addressof(msg)) == (0x10A2C, WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC)


def test_a_null_hwnd_reads_as_zero() -> None:
    msg = power_msg(PBT_APMSUSPEND)
    msg.hwnd = None
    assert read_msg(ctypes.addressof(msg))[0] == 0


@pytest.mark.parametrize("event_type", [QByteArray(b"windows_generic_MSG"), b"windows_generic_MSG"])
def test_the_filter_passes_power_events_on_and_consumes_nothing(event_type: object) -> None:
    events: list[PowerEvent] = []
    native_filter = PowerBroadcastFilter(events.append)
    messages = [power_msg(PBT_APMSUSPEND), power_msg(0, WM_TIMER), power_msg(PBT_APMRESUMESUSPEND)]

    answers = [
        native_filter.nativeEventFilter(event_type, ctypes.addressof(m))  # type: ignore[arg-type]
        for m in messages
    ]

    assert events == ["sleep", "resume"]
    assert answers == [(False, 0)] * 3


def test_the_filter_reads_no_memory_of_other_event_types() -> None:
    events: list[PowerEvent] = []
    native_filter = PowerBroadcastFilter(events.append)
    # Address 0 would crash if read: an xcb event is not a MSG.
    assert native_filter.nativeEventFilter(QByteArray(b"xcb_generic_event_t"), 0) == (False, 0)
    assert events == []


def test_off_windows_the_source_says_why_it_cannot_start(qapp: QCoreApplication) -> None:
    source = PowerBroadcastResumeSource(platform="linux")
    assert source.start(lambda: None) is False
    assert source.status == "WM_POWERBROADCAST exists only on Windows, not on linux"


def test_the_source_wires_its_filter_and_window_up_and_down(qapp: QCoreApplication) -> None:
    # The user32 registration is skipped off Windows, so only the broadcasts are listened to.
    source = PowerBroadcastResumeSource(platform="win32")
    assert source.start(lambda: None, lambda: None) is True
    assert source.status.startswith("listening to WM_POWERBROADCAST broadcasts only")
    source.start(lambda: None)  # a restart replaces the filter and the window
    source.stop()
    source.stop()
