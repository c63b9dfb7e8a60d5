"""Sending a machine the app woke back to sleep (``ports.Sleeper``).

* Linux with logind: ``Suspend(false)`` (not interactive: logind applies its policy and the
  inhibitors, a job's ``keep_awake`` among them).
* Linux without logind, as root: ``mem`` written to ``/sys/power/state`` (the write returns after
  the resume, so it is made on a thread of its own).
* Windows and macOS: the OS itself sends a machine that a timer woke back to sleep after a few idle
  minutes, unless something holds it awake; the app holds nothing once its jobs end (their
  ``ES_SYSTEM_REQUIRED`` or power assertion is released with them), so it only has to let it.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from domi_desktop.platform.wake.dbus import call
from domi_desktop.ports import Sleeper

log = logging.getLogger("domi_desktop.platform.wake")

LOGIN1 = "org.freedesktop.login1"
LOGIN1_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
POWER_STATE = Path("/sys/power/state")


class LogindSleeper:
    def __init__(self, bus: str = "SYSTEM") -> None:
        self._bus = bus
        self._status = "not asked yet"

    @property
    def status(self) -> str:
        return self._status

    def can_suspend(self) -> str:
        """logind's ``CanSuspend``: ``yes``, ``no``, ``challenge``, ``na``... (raises without it)."""
        return str(call(self._bus, LOGIN1, LOGIN1_PATH, MANAGER, "CanSuspend")[0])

    def sleep(self) -> bool:
        try:
            call(self._bus, LOGIN1, LOGIN1_PATH, MANAGER, "Suspend", "b", (False,))
        except Exception as error:
            self._status = f"logind refused Suspend: {error}"
            return False
        self._status = "asked logind to suspend"
        return True


class PowerStateSleeper:
    def __init__(self, path: Path = POWER_STATE) -> None:
        self.path = path
        self._status = "not asked yet"
        self._thread: threading.Thread | None = None

    @property
    def status(self) -> str:
        return self._status

    def sleep(self) -> bool:
        if self._thread is not None and self._thread.is_alive():
            self._status = "a suspend is already under way"
            return False
        self._status = f"writing mem to {self.path}"
        self._thread = threading.Thread(target=self._write, name="domi-suspend", daemon=True)
        self._thread.start()
        return True

    def _write(self) -> None:
        try:
            with self.path.open("w", encoding="ascii") as file:
                file.write("mem\n")
        except OSError as error:
            self._status = f"cannot write mem to {self.path}: {error}"
            log.warning("%s", self._status)
        else:
            self._status = f"suspended through {self.path}, and resumed"

    def join(self, timeout: float) -> None:
        """For tests: wait for the write to end."""
        if self._thread is not None:
            self._thread.join(timeout)


class OsSleeper:
    """Windows and macOS: the OS's own unattended-idle sleep does it."""

    def __init__(self, how: str) -> None:
        self._status = how

    @property
    def status(self) -> str:
        return self._status

    def sleep(self) -> bool:
        log.info("%s", self._status)
        return True


def linux_sleeper(power_state: Path = POWER_STATE) -> Sleeper | None:
    """logind when it answers, else ``/sys/power/state`` when we may write it; ``None``."""
    logind = LogindSleeper()
    try:
        answer = logind.can_suspend()
        if answer in ("yes", "challenge"):
            return logind
        log.info("logind says CanSuspend=%s", answer)
    except Exception as error:
        log.info("no logind to suspend through (%s)", error)
    if power_state.exists() and os.access(power_state, os.W_OK):
        return PowerStateSleeper(power_state)
    return None
