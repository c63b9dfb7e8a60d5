"""Linux: logind's ``PrepareForSleep(b)`` on the system bus (``true`` before sleep, ``false`` after)."""

from __future__ import annotations

from collections.abc import Callable

from domi_desktop.platform.dbus import (
    LOGIND_MANAGER,
    LOGIND_PATH,
    LOGIND_SERVICE,
    BusCaller,
    BusError,
    BusSignal,
    BusUnreachable,
    SignalWatch,
    system_bus_address,
)
from domi_desktop.platform.resume.base import PowerCallbacks

RULE = {"interface": LOGIND_MANAGER, "member": "PrepareForSleep", "path": LOGIND_PATH}


class LogindResumeSource:
    """Reports logind's sleep and resume from a watch thread of its own (``platform.dbus``): the
    callbacks are called there, and post to their loop.

    Each ``start`` uses the address in ``$DBUS_SYSTEM_BUS_ADDRESS`` as it is then: a system bus
    that appears after the app started is used at the next start."""

    def __init__(self) -> None:
        self.status = "not started"
        self._watch: SignalWatch | None = None

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        address = system_bus_address()
        try:
            # Asked first: a bus without logind would take the match and never say anything.
            with BusCaller(address) as bus:
                bus.call(
                    "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "GetNameOwner", "s", LOGIND_SERVICE,
                )  # fmt: skip
            callbacks = PowerCallbacks("logind", on_resume, on_sleep)
            self._watch = SignalWatch(
                [RULE], lambda heard: _deliver(callbacks, heard), address, "domi-logind-sleep"
            )
        except BusUnreachable as error:
            self.status = f"no system bus (logind unavailable): {error}"
            return False
        except BusError as error:
            self.status = f"no logind on the system bus: {error}"
            return False
        self.status = f"listening to logind PrepareForSleep on {address}"
        return True

    def stop(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()


def _deliver(callbacks: PowerCallbacks, heard: BusSignal) -> None:
    if heard.body:
        callbacks.deliver("sleep" if heard.body[0] else "resume")
