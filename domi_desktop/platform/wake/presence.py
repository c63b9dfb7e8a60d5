"""Linux: did anyone use the machine since it woke? (``ports.InputWatch``)

* ``LogindInputWatch``: logind's session ``IdleHint``/``IdleSinceHint`` (set by the desktop): no
  input when the session is idle since before the wake.
* ``EvdevInputWatch``: without logind (a headless box, the sleep lab), the input devices' own
  events in ``/dev/input/event*`` (root or the ``input`` group may read them): no key, button,
  motion or touch since the mark. Their interrupt counts in ``/proc/interrupts`` cannot tell: a
  resume resets the PS/2 keyboard and mouse, and their counts move with no key typed.
"""

from __future__ import annotations

import logging
import os
import struct
import sys
from datetime import UTC, datetime
from pathlib import Path

from domi_desktop.platform.wake.dbus import call, get_property
from domi_desktop.ports import InputWatch

log = logging.getLogger("domi_desktop.platform.wake")

LOGIN1 = "org.freedesktop.login1"
LOGIN1_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
DEV_INPUT = Path("/dev/input")
EVENT = struct.Struct("@llHHi")
"""``struct input_event``: a ``timeval``, then type, code and value."""
EV_SYN, EV_KEY, EV_REL, EV_ABS = 0, 1, 2, 3
SYN_DROPPED = 3
PERSON = frozenset({EV_KEY, EV_REL, EV_ABS})


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


class EvdevInputWatch:
    """Keeps every input device open from the first mark: the kernel queues each reader's
    events, so what a person did meanwhile, asleep or awake, is there to read at the look."""

    def __init__(self, devices: Path = DEV_INPUT) -> None:
        self.devices = devices
        self._open: dict[Path, int] = {}
        self._marked = False
        self._seen: set[str] = set()
        self._status = "not marked"

    @property
    def status(self) -> str:
        return self._status

    def readable(self) -> list[Path]:
        """The event devices this process may read."""
        return [path for path in sorted(self.devices.glob("event*")) if os.access(path, os.R_OK)]

    def mark(self) -> None:
        if sys.platform != "linux":  # evdev is Linux's
            return
        for path in self.readable():
            if path not in self._open:
                try:
                    self._open[path] = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                except OSError as error:
                    log.info("cannot watch %s: %s", path, error)
        self._take()
        self._seen.clear()
        self._marked = bool(self._open)
        self._status = f"watching {len(self._open)} input device(s) in {self.devices}"

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        if not self._marked:
            return None
        self._take()
        self._status = f"input since the mark: {', '.join(sorted(self._seen)) or 'none'}"
        return bool(self._seen)

    def _take(self) -> None:
        """Reads what each device queued, noting those that saw a person."""
        for path, fd in list(self._open.items()):
            try:
                if person_in(_drain(fd)):
                    self._seen.add(path.name)
            except OSError:  # unplugged: a new one is opened at the next mark
                os.close(fd)
                del self._open[path]

    def close(self) -> None:
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()
        self._marked = False


def _drain(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, EVENT.size * 64)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def person_in(data: bytes) -> bool:
    """Whether ``struct input_event`` records hold a key, button, motion or touch, or say that
    the reader's queue overflowed (only a flood of them does that)."""
    usable = len(data) - len(data) % EVENT.size
    for _sec, _usec, kind, code, _value in EVENT.iter_unpack(data[:usable]):
        if kind in PERSON or (kind == EV_SYN and code == SYN_DROPPED):
            return True
    return False


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


def linux_input_watch(devices: Path = DEV_INPUT) -> InputWatch:
    """logind's when our session is known to it, else the input devices' events when this
    process may read them."""
    watch = LogindInputWatch()
    try:
        watch.session()
        return watch
    except Exception as error:
        log.info("no logind session to ask about input (%s): reading the input devices", error)
    evdev = EvdevInputWatch(devices)
    if evdev.readable():
        return evdev
    return NoInputWatch(
        f"no logind session, and no input device in {devices} this process may read"
        " (root or the input group may)"
    )
