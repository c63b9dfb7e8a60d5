"""Linux: logind's ``Inhibit("sleep", ...)`` on the system bus, which hands back a file descriptor;
the machine may not sleep (``block`` mode) until every copy of it is closed.

Our copy is made with ``os.dup``, so it is not inherited by the jobs we start: a job that outlives
its run (or a grandchild of it) cannot keep the machine awake.
"""

from __future__ import annotations

import logging
import os

from domi_desktop.platform.dbus import (
    LOGIND_MANAGER,
    LOGIND_PATH,
    LOGIND_SERVICE,
    BusCaller,
    BusError,
    BusRefused,
    system_bus_address,
)
from domi_desktop.platform.inhibit.base import NoInhibition
from domi_desktop.ports import InhibitorHandle

WHO = "domi-desktop"

_log = logging.getLogger("domi_desktop.platform.inhibit")


class FdInhibition:
    """Held while ``fd`` is open."""

    def __init__(self, fd: int, why: str) -> None:
        self._fd: int | None = fd
        self._why = why

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.close(fd)
        except OSError as error:  # already gone: nothing is held either way
            _log.warning("closing the sleep inhibitor fd for %s: %s", self._why, error)
        _log.info("sleep allowed again (%s)", self._why)


class LogindSleepInhibitor:
    """Asks logind on the bus at ``$DBUS_SYSTEM_BUS_ADDRESS`` as it is at each ``acquire``, on a
    connection of its own, closed at once: the fd outlives it."""

    def __init__(self, mode: str = "block") -> None:
        """``mode``: ``block`` keeps the machine awake; ``delay`` only holds a sleep back until
        released (at most logind's InhibitDelayMaxSec, 5 s by default), to do what must be done
        on the way to sleep once ``PrepareForSleep(true)`` has come."""
        self.status = "not used yet"
        self._mode = mode

    def acquire(self, why: str) -> InhibitorHandle:
        fd = self._inhibit(why)
        if fd is None:
            _log.warning("cannot keep the machine awake for %s: %s", why, self.status)
            return NoInhibition()
        self.status = f"logind keeps the machine awake ({why})"
        _log.info("sleep inhibited by logind (%s)", why)
        return FdInhibition(fd, why)

    def _inhibit(self, why: str) -> int | None:
        try:
            with BusCaller(system_bus_address(), fds=True) as bus:
                (handle,) = bus.call(
                    LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "Inhibit", "ssss",
                    "sleep", WHO, why, self._mode,
                )  # fmt: skip
        except BusRefused as error:
            self.status = f"logind refused Inhibit: {error.name}: {error}"
            return None
        except BusError as error:
            self.status = f"no logind to ask: {error}"
            return None
        except ValueError as error:  # no file descriptor in the answer
            self.status = f"logind's Inhibit returned no file descriptor: {error}"
            return None
        raw = int(handle.to_raw_fd())
        try:
            return os.dup(raw)  # not inheritable, whatever the message's copy was
        finally:
            os.close(raw)
