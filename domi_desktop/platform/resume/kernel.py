"""Linux without logind (a headless box, a container, the sleep lab): the kernel tells the resume.

A ``timerfd`` on ``CLOCK_REALTIME`` armed with ``TFD_TIMER_CANCEL_ON_SET`` is cancelled (its read
fails with ``ECANCELED``) whenever the wall clock is set, and the kernel counts a resume from
suspend as such a set. Watched by a ``QSocketNotifier`` it wakes the app as the machine resumes:
the driver's own check of the clocks runs only at its next tick, up to a minute later, since that
tick's timer is on the monotonic clock, which stood still while the machine slept (measured in the
sleep lab: a catch-up 40 s after the resume). A cancellation is reported as a resume only when
``CLOCK_BOOTTIME`` moved ahead of ``CLOCK_MONOTONIC`` meanwhile (the time spent suspended); a clock
that was merely set is left to that check, as before. Nothing is said before a sleep: no signal
comes then.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier

from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.platform.wake.linux import Itimerspec, load_libc

CLOCK_REALTIME = 0
TFD_NONBLOCK = 0o4000
TFD_CLOEXEC = 0o2000000
TFD_TIMER_ABSTIME = 1
TFD_TIMER_CANCEL_ON_SET = 2
FAR_AWAY = 2**40
"""The timer's expiry (epoch seconds, some 35,000 years ahead): it only ever gets cancelled."""
SLEPT = 0.05
"""Seconds ``CLOCK_BOOTTIME`` must gain on ``CLOCK_MONOTONIC`` to be a sleep, not reading noise."""


def suspended_seconds() -> float:
    """The seconds this machine has spent suspended since it booted."""
    if sys.platform != "linux":
        raise OSError(f"no CLOCK_BOOTTIME on {sys.platform}")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)


class KernelResumeSource(QObject):
    """Reports each resume on the Qt thread this object lives in (no sleep reports)."""

    def __init__(self, parent: QObject | None = None, load: Callable[[], Any] = load_libc) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._load = load
        self._libc: Any = None
        self._fd: int | None = None
        self._notifier: QSocketNotifier | None = None
        self._callbacks: PowerCallbacks | None = None
        self._suspended = 0.0

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        try:
            self._libc = libc = self._load()
            fd = libc.timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC)
            if fd < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        except OSError as error:
            self.status = f"no clock-set timer (timerfd): {error}"
            return False
        self._fd = fd
        try:
            self._arm()
        except OSError as error:
            self.stop()
            self.status = f"no clock-set timer (timerfd): {error}"
            return False
        self._suspended = suspended_seconds()
        self._notifier = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._cancelled)
        self._callbacks = PowerCallbacks("the kernel", on_resume, on_sleep)
        self.status = (
            "the kernel's clock-set timer (timerfd, TFD_TIMER_CANCEL_ON_SET) tells resumes"
        )
        return True

    def _arm(self) -> None:
        assert self._fd is not None
        spec = Itimerspec()
        spec.it_value.tv_sec = FAR_AWAY
        flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET
        if self._libc.timerfd_settime(self._fd, flags, ctypes.byref(spec), None) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    def _cancelled(self) -> None:
        if self._fd is None:
            return
        try:
            os.read(self._fd, 8)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.ECANCELED:
                raise
        self._arm()  # armed anew, to be cancelled by the next set
        before, self._suspended = self._suspended, suspended_seconds()
        if self._suspended - before > SLEPT and self._callbacks is not None:
            self._callbacks.deliver("resume")

    def stop(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._callbacks = None
