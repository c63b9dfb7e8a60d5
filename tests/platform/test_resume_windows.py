from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from domi_desktop.platform.resume.windows import (
    DEVICE_NOTIFY_CALLBACK,
    PBT_APMRESUMEAUTOMATIC,
    PBT_APMRESUMESUSPEND,
    PBT_APMSUSPEND,
    SuspendResumeCallbackSource,
    decode_power_event,
)
from tests.platform.fakes import FakePowrProf

PBT_APMPOWERSTATUSCHANGE = 0xA
PBT_POWERSETTINGCHANGE = 0x8013
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("power_type", "event"),
    [
        (PBT_APMRESUMEAUTOMATIC, "resume"),
        (PBT_APMRESUMESUSPEND, "resume"),
        (PBT_APMSUSPEND, "sleep"),
        (PBT_APMPOWERSTATUSCHANGE, None),
        (PBT_POWERSETTINGCHANGE, None),
    ],
)
def test_it_decodes_the_power_notifications(power_type: int, event: str | None) -> None:
    assert decode_power_event(power_type) == event


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def resume(self) -> None:
        self.calls.append(("resume", threading.get_ident()))

    def sleep(self) -> None:
        self.calls.append(("sleep", threading.get_ident()))


def started(powrprof: FakePowrProf, recorder: Recorder) -> SuspendResumeCallbackSource:
    source = SuspendResumeCallbackSource(platform="win32", powrprof=powrprof)
    assert source.start(recorder.resume, recorder.sleep) is True
    return source


def test_events_from_a_system_thread_arrive_on_the_qt_thread_in_order(qtbot: QtBot) -> None:
    powrprof = FakePowrProf()
    recorder = Recorder()
    source = started(powrprof, recorder)
    assert powrprof.flags == [DEVICE_NOTIFY_CALLBACK]
    assert source.status == (
        "listening to Windows suspend/resume notifications (callback, no window)"
    )

    answers = [powrprof.send(t) for t in (PBT_APMSUSPEND, PBT_APMRESUMEAUTOMATIC)]

    assert answers == [0, 0]  # ERROR_SUCCESS, at once: Windows waits for the callback
    assert threading.get_ident() not in powrprof.callback_threads
    # Nothing ran on the system's thread: the callbacks wait for the Qt loop.
    assert recorder.calls == []
    qtbot.waitUntil(lambda: len(recorder.calls) == 2, timeout=5000)
    main = threading.get_ident()
    assert recorder.calls == [("sleep", main), ("resume", main)]
    source.stop()


def test_other_notifications_are_ignored(qtbot: QtBot) -> None:
    powrprof = FakePowrProf()
    recorder = Recorder()
    source = started(powrprof, recorder)

    powrprof.send(PBT_APMPOWERSTATUSCHANGE)
    powrprof.send(PBT_APMRESUMESUSPEND)

    qtbot.waitUntil(lambda: len(recorder.calls) == 1, timeout=5000)
    assert [name for name, _thread in recorder.calls] == ["resume"]
    source.stop()


def test_stop_unregisters_and_a_late_callback_reports_nothing(qtbot: QtBot) -> None:
    powrprof = FakePowrProf()
    recorder = Recorder()
    source = started(powrprof, recorder)
    late = SuspendResumeCallbackSource._on_power_event

    source.stop()
    source.stop()

    assert powrprof.unregistered == [FakePowrProf.HANDLE]
    assert not powrprof.registered
    assert late(source, None, PBT_APMRESUMEAUTOMATIC, None) == 0
    qtbot.wait(50)
    assert recorder.calls == []

    assert source.start(recorder.resume) is True  # a restart registers again
    assert powrprof.registered
    source.stop()


def test_a_refused_registration_says_so_and_reports_nothing() -> None:
    powrprof = FakePowrProf(refuse_with=5)
    source = SuspendResumeCallbackSource(platform="win32", powrprof=powrprof)
    assert source.start(lambda: None) is False
    assert source.status == "PowerRegisterSuspendResumeNotification failed with error 5"
    source.stop()
    assert powrprof.unregistered == []


def test_off_windows_the_source_says_why_it_cannot_start() -> None:
    source = SuspendResumeCallbackSource(platform="linux")
    assert source.start(lambda: None) is False
    assert source.status == "suspend/resume notifications exist only on Windows, not on linux"


@pytest.mark.skipif(sys.platform == "win32", reason="powrprof.dll is there")
def test_without_powrprof_the_source_says_so() -> None:
    source = SuspendResumeCallbackSource(platform="win32")
    assert source.start(lambda: None) is False
    assert source.status == (
        "powrprof.dll cannot be loaded, so no suspend/resume events: "
        "powrprof.dll exists only on Windows"
    )


HEADLESS = """
import json, sys
from PySide6.QtCore import QCoreApplication, QTimer
from domi_desktop.platform.resume.windows import SuspendResumeCallbackSource
from tests.platform.fakes import FakePowrProf

app = QCoreApplication(sys.argv[:1])
powrprof = FakePowrProf()
calls = []
source = SuspendResumeCallbackSource(platform="win32", powrprof=powrprof)
started = source.start(lambda: calls.append("resume"), lambda: calls.append("sleep"))
powrprof.send(0x4)
powrprof.send(0x12)
QTimer.singleShot(200, app.quit)
app.exec()
source.stop()
print(json.dumps({"started": started, "calls": calls, "gui": "PySide6.QtGui" in sys.modules}))
"""


def test_headless_gets_the_events_under_a_bare_core_application() -> None:
    # The defect: the old source created a QWindow, which aborts a QCoreApplication without screens.
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
