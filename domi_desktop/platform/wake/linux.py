"""Linux: the ways to have the machine woken, tried in order (``linux_wake_alarm``):

1. a transient systemd **user** timer with ``WakeSystem=yes`` (``systemd.py``), when the session's
   user manager can set one (systemd 254 gave it ``CAP_WAKE_ALARM``);
2. our own ``timerfd`` on ``CLOCK_REALTIME_ALARM``, when the app holds ``CAP_WAKE_ALARM`` (the
   kernel programs the RTC with the soonest alarm timer as the machine suspends);
3. the RTC's ``wakealarm`` file, when we may write it (root: a headless box, the sleep lab);
4. none, saying why and what would allow it.

``DOMI_WAKE_ALARM`` (``systemd``, ``timerfd``, ``rtc`` or ``none``) picks one on purpose.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from domi_desktop.ffi import Signature, load_c
from domi_desktop.platform.wake.base import epoch_seconds, utc_text
from domi_desktop.ports import WakeAlarm
from domi_desktop.runtime.waking import NoWakeAlarm

log = logging.getLogger("domi_desktop.platform.wake")

CLOCK_REALTIME_ALARM = 8
TFD_CLOEXEC = 0o2000000
TFD_TIMER_ABSTIME = 1
RTC_WAKEALARM = Path("/sys/class/rtc/rtc0/wakealarm")
CHOICE_VARIABLE = "DOMI_WAKE_ALARM"


class _Timespec(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long))


class Itimerspec(ctypes.Structure):
    _fields_ = (("it_interval", _Timespec), ("it_value", _Timespec))


LIBC: dict[str, Signature] = {
    "timerfd_create": ((ctypes.c_int, ctypes.c_int), ctypes.c_int),
    "timerfd_settime": (
        (ctypes.c_int, ctypes.c_int, ctypes.POINTER(Itimerspec), ctypes.POINTER(Itimerspec)),
        ctypes.c_int,
    ),
    "timerfd_gettime": ((ctypes.c_int, ctypes.POINTER(Itimerspec)), ctypes.c_int),
}


def load_libc() -> Any:
    return load_c(None, LIBC, use_errno=True)


class TimerfdWakeAlarm:
    """A ``CLOCK_REALTIME_ALARM`` timerfd held open by the app: the alarm lives as long as the fd
    (it ends with the process, crash or not) and is not inherited by the jobs (``TFD_CLOEXEC``)."""

    via = "a CLOCK_REALTIME_ALARM timer"

    def __init__(self, load: Callable[[], Any] = load_libc) -> None:
        self._load = load
        self._libc: Any = None
        self._fd: int | None = None
        self._status = "not armed"

    @property
    def status(self) -> str:
        return self._status

    def capability(self) -> str | None:
        if self._fd is not None:
            return None
        try:
            fd = self._create()
        except OSError as error:
            return _timerfd_refusal(error)
        os.close(fd)
        return None

    def arm(self, at: datetime) -> bool:
        try:
            if self._fd is None:
                self._fd = self._create()
            self._set(epoch_seconds(at))
        except OSError as error:
            self._status = f"cannot arm {self.via}: {_timerfd_refusal(error)}"
            return False
        self._status = f"the machine wakes at {utc_text(at)} ({self.via})"
        return True

    def cancel(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # a closed timerfd's alarm is gone
        self._status = "not armed"

    def armed_at(self) -> int | None:
        """The armed instant in epoch seconds as the kernel has it (``None``: nothing armed)."""
        if self._fd is None:
            return None
        now = Itimerspec()
        if self._libc.timerfd_gettime(self._fd, ctypes.byref(now)) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_gettime")
        if now.it_value.tv_sec == 0 and now.it_value.tv_nsec == 0:
            return None
        # gettime answers with the time left, not the absolute instant.
        left = float(now.it_value.tv_sec) + float(now.it_value.tv_nsec) / 1e9
        return round(time.time() + left)

    def _create(self) -> int:
        if self._libc is None:
            self._libc = self._load()
        fd: int = self._libc.timerfd_create(CLOCK_REALTIME_ALARM, TFD_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return fd

    def _set(self, seconds: int) -> None:
        spec = Itimerspec()
        spec.it_value.tv_sec = seconds
        if self._libc.timerfd_settime(self._fd, TFD_TIMER_ABSTIME, ctypes.byref(spec), None) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))


def _timerfd_refusal(error: OSError) -> str:
    if error.errno == errno.EPERM:
        return (
            "the app lacks CAP_WAKE_ALARM (systemd 254 or later lets a user timer wake the "
            "machine; or give the app the capability: setcap cap_wake_alarm+ep)"
        )
    if error.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENODEV):
        return "this kernel has no alarm timers (no RTC that can wake the machine)"
    return f"timerfd_create(CLOCK_REALTIME_ALARM) failed: {error}"


class RtcWakeAlarm:
    """The RTC's ``wakealarm`` file: the epoch second to wake at, ``0`` to clear it (the kernel
    refuses a new alarm over a pending one, so it is cleared first)."""

    via = "the RTC alarm"

    def __init__(self, path: Path = RTC_WAKEALARM) -> None:
        self.path = path
        self._armed = False
        self._status = "not armed"

    @property
    def status(self) -> str:
        return self._status

    def capability(self) -> str | None:
        if not self.path.exists():
            return f"this machine has no RTC alarm ({self.path} is missing)"
        if not os.access(self.path, os.W_OK):
            return f"{self.path} is writable by root only (run the app as root to use it)"
        return None

    def arm(self, at: datetime) -> bool:
        try:
            self._write("0")
            self._write(str(epoch_seconds(at)))
        except OSError as error:
            self._status = f"cannot arm {self.via}: {error}"
            return False
        self._armed = True
        self._status = f"the machine wakes at {utc_text(at)} ({self.via})"
        return True

    def cancel(self) -> None:
        if self._armed:
            try:
                self._write("0")
            except OSError as error:
                log.warning("cannot clear %s: %s", self.path, error)
            self._armed = False
        self._status = "not armed"

    def _write(self, text: str) -> None:
        with self.path.open("w", encoding="ascii") as file:
            file.write(text + "\n")


def linux_wake_alarm(
    environ: Mapping[str, str] = os.environ,
    *,
    systemd: Callable[[], Any] | None = None,
    timerfd: Callable[[], TimerfdWakeAlarm] = TimerfdWakeAlarm,
    rtc: Callable[[], RtcWakeAlarm] = RtcWakeAlarm,
) -> WakeAlarm:
    """The first way that works here (module docstring); a ``NoWakeAlarm`` saying why each failed."""
    if systemd is None:
        from domi_desktop.platform.wake.systemd import SystemdWakeAlarm

        systemd = SystemdWakeAlarm
    makers: dict[str, Callable[[], Any]] = {"systemd": systemd, "timerfd": timerfd, "rtc": rtc}
    chosen = environ.get(CHOICE_VARIABLE, "").strip().lower()
    if chosen == "none":
        return NoWakeAlarm(f"{CHOICE_VARIABLE}=none: waking the machine is turned off")
    if chosen and chosen not in makers:
        log.warning(
            "%s=%r is not one of systemd, timerfd, rtc, none: ignored", CHOICE_VARIABLE, chosen
        )
    elif chosen:
        makers = {chosen: makers[chosen]}
    reasons: list[str] = []
    for name, make in makers.items():
        alarm = make()
        why = alarm.capability()
        if why is None:
            log.info("waking the machine through %s", alarm.via)
            return alarm  # type: ignore[no-any-return]
        reasons.append(f"{name}: {why}")
    return NoWakeAlarm("; ".join(reasons))
