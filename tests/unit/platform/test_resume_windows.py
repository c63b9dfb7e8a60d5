from __future__ import annotations

import ctypes
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from domi_desktop.platform.resume.windows import (
    DEVICE_NOTIFY_WINDOW_HANDLE,
    PBT_APMRESUMEAUTOMATIC,
    PBT_APMRESUMESUSPEND,
    PBT_APMSUSPEND,
    WM_POWERBROADCAST,
    WM_SETTINGCHANGE,
    WM_TIMECHANGE,
    WNDCLASSW,
    PowerWindowResumeSource,
    decode_power_message,
)
from tests.unit.platform.fakes import FakeUser32

PBT_APMPOWERSTATUSCHANGE = 0xA
WM_TIMER = 0x0113
REPOSITORY = Path(__file__).resolve().parents[3]


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


def test_the_window_class_has_the_size_of_windows_wndclassw() -> None:
    # sizeof(WNDCLASSW) in winuser.h: 72 bytes on 64-bit Windows, 40 on 32-bit.
    assert ctypes.sizeof(WNDCLASSW) == (72 if ctypes.sizeof(ctypes.c_void_p) == 8 else 40)


def started(user32: FakeUser32, calls: list[str]) -> PowerWindowResumeSource:
    source = PowerWindowResumeSource(platform="win32", user32=user32)
    assert source.start(lambda: calls.append("resume"), lambda: calls.append("sleep")) is True
    return source


def test_the_window_procedure_reports_power_messages_and_passes_the_rest_on() -> None:
    user32 = FakeUser32()
    calls: list[str] = []
    source = started(user32, calls)
    assert user32.registrations == [(FakeUser32.HWND, DEVICE_NOTIFY_WINDOW_HANDLE)]
    assert source.status == (
        "listening to WM_POWERBROADCAST (hidden window, suspend/resume registered)"
    )

    answers = [
        user32.send(WM_POWERBROADCAST, PBT_APMSUSPEND),
        user32.send(WM_TIMER, 1),
        user32.send(WM_POWERBROADCAST, PBT_APMPOWERSTATUSCHANGE),
        user32.send(WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC),
        user32.send(WM_POWERBROADCAST, PBT_APMRESUMESUSPEND),
    ]

    assert calls == ["sleep", "resume", "resume"]
    assert answers == [1, 0, 0, 1, 1]  # TRUE for ours; DefWindowProc's answer for the rest
    assert user32.default_calls == [WM_TIMER, WM_POWERBROADCAST]
    source.stop()


def test_the_class_and_its_window_belong_to_the_executable() -> None:
    # With a NULL instance the class was registered for no module.
    user32 = FakeUser32()
    source = started(user32, [])
    assert user32.instances == [("class", FakeUser32.MODULE), ("window", FakeUser32.MODULE)]
    source.stop()


def test_time_and_settings_broadcasts_are_passed_on_and_to_windows() -> None:
    user32 = FakeUser32()
    changes: list[str] = []
    source = PowerWindowResumeSource(
        platform="win32", user32=user32, on_settings_change=lambda: changes.append("changed")
    )
    assert source.start(lambda: None)
    assert user32.send(WM_TIMECHANGE, 0) == 0
    assert user32.send(WM_SETTINGCHANGE, 0) == 0
    assert changes == ["changed", "changed"]
    assert user32.default_calls == [WM_TIMECHANGE, WM_SETTINGCHANGE]
    source.stop()


def test_an_exception_in_the_procedure_is_logged_and_the_message_still_handled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Escaping into ctypes it was printed and the message answered 0: for WM_NCCREATE that fails
    # the window's creation without a word.
    def broken() -> None:
        raise RuntimeError("boom")

    user32 = FakeUser32()
    source = PowerWindowResumeSource(platform="win32", user32=user32, on_settings_change=broken)
    assert source.start(lambda: None)
    with caplog.at_level(logging.ERROR):
        user32.send(WM_SETTINGCHANGE, 0)
    assert user32.default_calls == [WM_SETTINGCHANGE]
    assert "the power window's procedure failed on message 0x001a" in caplog.text
    assert "RuntimeError: boom" in caplog.text
    source.stop()


def test_stop_unregisters_destroys_the_window_and_a_restart_works() -> None:
    user32 = FakeUser32()
    calls: list[str] = []
    source = started(user32, calls)

    source.stop()
    source.stop()

    assert user32.unregistered == [FakeUser32.REGISTRATION]
    assert user32.windows == {}
    assert user32.classes == {}
    assert source.start(lambda: calls.append("resume")) is True  # the class registers again
    user32.send(WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC)
    assert calls == ["resume"]
    source.stop()


def test_without_the_suspend_registration_it_still_listens_to_broadcasts() -> None:
    user32 = FakeUser32(register_fails=True)
    calls: list[str] = []
    source = started(user32, calls)
    assert (
        source.status == "listening to WM_POWERBROADCAST broadcasts only (no suspend registration)"
    )
    user32.send(WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC)
    assert calls == ["resume"]
    source.stop()
    assert user32.unregistered == []


def test_a_window_that_cannot_be_made_says_so_and_leaves_no_class() -> None:
    user32 = FakeUser32(create_fails=True)
    source = PowerWindowResumeSource(platform="win32", user32=user32)
    assert source.start(lambda: None) is False
    assert source.status == "cannot create the hidden window for WM_POWERBROADCAST"
    assert user32.classes == {}


def test_two_sources_use_two_window_classes() -> None:
    user32 = FakeUser32()
    first = PowerWindowResumeSource(platform="win32", user32=user32)
    second = PowerWindowResumeSource(platform="win32", user32=user32)
    assert first.start(lambda: None)
    assert second.start(lambda: None)
    assert len(user32.classes) == 2
    first.stop()
    second.stop()


def test_off_windows_the_source_says_why_it_cannot_start() -> None:
    source = PowerWindowResumeSource(platform="linux")
    assert source.start(lambda: None) is False
    assert source.status == "WM_POWERBROADCAST exists only on Windows, not on linux"


@pytest.mark.posix_only  # user32.dll is on Windows
def test_without_user32_the_source_says_so() -> None:
    source = PowerWindowResumeSource(platform="win32")
    assert source.start(lambda: None) is False
    assert source.status == (
        "user32.dll cannot be loaded, so no WM_POWERBROADCAST: "
        f"user32 exists on Windows only, not on {sys.platform}"
    )


HEADLESS = """
import json, sys
from PySide6.QtCore import QCoreApplication, QTimer
from domi_desktop.platform.resume.windows import PowerWindowResumeSource
from tests.unit.platform.fakes import FakeUser32

app = QCoreApplication(sys.argv[:1])
user32 = FakeUser32()
calls = []
source = PowerWindowResumeSource(platform="win32", user32=user32)
started = source.start(lambda: calls.append("resume"), lambda: calls.append("sleep"))
# As Qt's dispatcher would hand the messages to the window procedure, inside the event loop.
QTimer.singleShot(0, lambda: user32.send(0x0218, 0x4))
QTimer.singleShot(0, lambda: user32.send(0x0218, 0x12))
QTimer.singleShot(50, app.quit)
app.exec()
source.stop()
print(json.dumps({"started": started, "calls": calls, "gui": "PySide6.QtGui" in sys.modules}))
"""


def test_headless_gets_the_events_under_a_bare_core_application() -> None:
    # The defect: the old source made a QWindow, which aborts a QCoreApplication without screens
    # (exit 134). The new one loads no QtGui at all.
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    result = subprocess.run(
        [sys.executable, "-c", HEADLESS],
        cwd=REPOSITORY,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "started": True,
        "calls": ["sleep", "resume"],
        "gui": False,
    }
