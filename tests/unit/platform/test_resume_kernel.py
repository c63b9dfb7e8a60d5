"""The kernel's clock-set timer as a resume source (Linux without logind); a real suspend is in the
sleep lab (tests/sleeplab), this is its decision on a pipe standing in for the timerfd."""

from __future__ import annotations

import os
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication

from domi_desktop.platform.resume import kernel
from domi_desktop.platform.resume.kernel import KernelResumeSource

pytestmark = pytest.mark.linux_only


class PipeTimer:
    """timerfd_create gives a pipe's read end; each settime is recorded."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)
        self.armed: list[int] = []

    def timerfd_create(self, clock: int, flags: int) -> int:
        assert clock == kernel.CLOCK_REALTIME
        return self.read_end

    def timerfd_settime(self, fd: int, flags: int, new: Any, old: Any) -> int:
        assert flags == kernel.TFD_TIMER_ABSTIME | kernel.TFD_TIMER_CANCEL_ON_SET
        self.armed.append(fd)
        return 0

    def cancel(self) -> None:
        os.write(self.write_end, b"\0" * 8)


def test_a_real_timerfd_starts_and_stops(qapp: QCoreApplication) -> None:
    source = KernelResumeSource()
    assert source.start(lambda: None) is True
    assert "clock-set timer" in source.status
    source.stop()
    source.stop()


@pytest.mark.parametrize(("slept", "told"), [(30.0, 1), (0.0, 0)])
def test_a_cancel_is_a_resume_only_when_the_boot_clock_gained_on_the_monotonic_one(
    qapp: QCoreApplication, monkeypatch: pytest.MonkeyPatch, slept: float, told: int
) -> None:
    timer = PipeTimer()
    suspended = [100.0]
    monkeypatch.setattr(kernel, "suspended_seconds", lambda: suspended[0])
    resumes: list[str] = []
    source = KernelResumeSource(load=lambda: timer)
    assert source.start(lambda: resumes.append("resume"))
    suspended[0] += slept
    timer.cancel()
    for _ in range(50):
        QCoreApplication.processEvents()
    assert resumes == ["resume"] * told
    assert len(timer.armed) == 2  # armed again after each cancel
    source.stop()
    os.close(timer.write_end)
