"""Linux: did anyone use the machine since it woke? (``ports.InputWatch``)

* ``LogindInputWatch``: logind's session ``IdleHint``/``IdleSinceHint`` (set by the desktop): no
  input when the session is idle since before the wake.
* ``InterruptInputWatch``: without logind (a headless box, the sleep lab), the interrupt counts of
  the input devices in ``/proc/interrupts`` (the PS/2 controller ``i8042``, the USB host
  controllers, anything named like a keyboard, a mouse or a touchpad): no input when they did not
  move since the mark. USB disks share the controllers' lines; their traffic counts as input, which
  errs on the side of staying awake.
"""

from __future__ import annotations

import logging
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from domi_desktop.platform.wake.dbus import call, get_property
from domi_desktop.ports import InputWatch

log = logging.getLogger("domi_desktop.platform.wake")

LOGIN1 = "org.freedesktop.login1"
LOGIN1_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
PROC_INTERRUPTS = Path("/proc/interrupts")
INPUT_LINES = re.compile(r"i8042|[xeou]hci|keyboard|mouse|touchpad|trackpad|hid", re.IGNORECASE)


class LogindInputWatch:
    def __init__(self, bus: str = "SYSTEM", pid: int | None = None) -> None:
        self._bus = bus
        self._pid = os.getpid() if pid is None else pid
        self._status = "not asked yet"

    @property
    def status(self) -> str:
        return self._status

    def session(self) -> str:
        """The object path of our logind session; raises when there is none."""
        return str(
            call(self._bus, LOGIN1, LOGIN1_PATH, MANAGER, "GetSessionByPID", "u", (self._pid,))[0]
        )

    def mark(self) -> None:
        """logind keeps the time itself."""

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        try:
            path = self.session()
            idle = bool(get_property(self._bus, LOGIN1, path, SESSION, "IdleHint"))
            since = int(get_property(self._bus, LOGIN1, path, SESSION, "IdleSinceHint"))
        except Exception as error:  # no logind, no session: cannot tell
            self._status = f"cannot read the session's idle hint from logind: {error}"
            return None
        idle_since = datetime.fromtimestamp(since / 1e6, UTC) if since else None
        self._status = f"logind: idle {idle}, since {idle_since}"
        if not idle or idle_since is None:
            return True
        return idle_since > woke_at


class InterruptInputWatch:
    def __init__(self, path: Path = PROC_INTERRUPTS) -> None:
        self.path = path
        self._marked: dict[str, int] | None = None
        self._status = "not marked"

    @property
    def status(self) -> str:
        return self._status

    def counts(self) -> dict[str, int]:
        """The input devices' lines of ``/proc/interrupts``: their name -> interrupts on all CPUs."""
        found: dict[str, int] = {}
        lines = self.path.read_text(encoding="ascii", errors="replace").splitlines()
        cpus = len(lines[0].split()) if lines else 0
        for line in lines[1:]:
            label, _, rest = line.partition(":")
            fields = rest.split()
            if not INPUT_LINES.search(" ".join(fields[cpus:])):
                continue
            numbers = [int(field) for field in fields[:cpus] if field.isdigit()]
            found[label.strip() + " " + " ".join(fields[cpus:])] = sum(numbers)
        return found

    def mark(self) -> None:
        try:
            self._marked = self.counts()
            self._status = f"watching {len(self._marked)} input interrupt line(s) of {self.path}"
        except OSError as error:
            self._marked = None
            self._status = f"cannot read {self.path}: {error}"

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        if self._marked is None:
            return None
        try:
            now = self.counts()
        except OSError as error:
            self._status = f"cannot read {self.path}: {error}"
            return None
        moved = sorted(name for name, count in now.items() if count != self._marked.get(name))
        self._status = f"input interrupts since the mark: {', '.join(moved) or 'none'}"
        return bool(moved)


class NoInputWatch:
    """Nothing tells: every question is answered ``None`` (the machine stays awake)."""

    def __init__(self, reason: str) -> None:
        self._status = reason

    @property
    def status(self) -> str:
        return self._status

    def mark(self) -> None:
        pass

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        return None


def linux_input_watch(interrupts: Path = PROC_INTERRUPTS) -> InputWatch:
    """logind's when our session is known to it, else the interrupt counts when the input
    devices show in them."""
    watch = LogindInputWatch()
    try:
        watch.session()
        return watch
    except Exception as error:
        log.info("no logind session to ask about input (%s): counting interrupts", error)
    counted = InterruptInputWatch(interrupts)
    try:
        if counted.counts():
            return counted
        return NoInputWatch(f"no input device in {interrupts} and no logind session")
    except OSError as error:
        return NoInputWatch(f"cannot read {interrupts} ({error}) and no logind session")
