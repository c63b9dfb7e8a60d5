"""Linux: the session's unlock, heard every way a desktop tells it.

- logind's ``Session.Unlock`` signal, sent only when something calls the session's ``Unlock()``
  (``loginctl unlock-session``);
- the session's ``LockedHint`` going false (a ``PropertiesChanged`` on the system bus): GNOME Shell
  and KDE's lockers call ``SetLockedHint``;
- ``ActiveChanged(false)`` of ``org.freedesktop.ScreenSaver`` or ``org.gnome.ScreenSaver`` on the
  session bus (GNOME, KDE, xfce4-screensaver, light-locker).

One unlock may arrive as all three at once: it is reported once. A report comes when a lock was
heard since the last one, or, for lockers that say nothing when they lock, when the last report is
older than ``SAME_UNLOCK`` seconds.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from domi_desktop.platform.dbus import (
    LOGIND_MANAGER,
    LOGIND_PATH,
    LOGIND_SERVICE,
    PROPERTIES,
    BusCaller,
    BusError,
    BusSignal,
    SignalWatch,
    session_bus_address,
    system_bus_address,
)

log = logging.getLogger(__name__)

SESSION = "org.freedesktop.login1.Session"
SCREENSAVERS = ("org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver")
SAME_UNLOCK = 5.0


class UnlockHeard:
    """Folds the signals of locks and unlocks into one report per unlock; any thread may call."""

    def __init__(
        self, on_unlock: Callable[[], None], monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._on_unlock = on_unlock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._locked = False
        self._reported_at: float | None = None

    def locked(self) -> None:
        with self._lock:
            self._locked = True

    def unlocked(self, how: str) -> None:
        with self._lock:
            now = self._monotonic()
            recent = self._reported_at is not None and now - self._reported_at < SAME_UNLOCK
            if recent and not self._locked:
                return
            self._locked, self._reported_at = False, now
        log.info("the session was unlocked (%s)", how)
        self._on_unlock()


class LinuxUnlockSource:
    """Each watch is a thread of its own (``platform.dbus``): ``on_unlock`` is called there."""

    def __init__(self) -> None:
        self.status = "not started"
        self._watches: list[SignalWatch] = []

    def start(self, on_unlock: Callable[[], None]) -> bool:
        self.stop()
        heard = UnlockHeard(on_unlock)
        said: list[str] = []
        path = self._session_path(said)
        if path is not None:
            rules = [
                {"path": path, "interface": SESSION, "member": "Unlock"},
                {"path": path, "interface": SESSION, "member": "Lock"},
                {"path": path, "interface": PROPERTIES, "member": "PropertiesChanged"},
            ]
            self._watch(rules, lambda signal: _from_logind(heard, signal), None, said, path)
        session_bus = session_bus_address()
        if session_bus is None:
            said.append("no session bus: screen lockers are not heard")
        else:
            rules = [{"interface": name, "member": "ActiveChanged"} for name in SCREENSAVERS]
            self._watch(
                rules, lambda signal: _from_locker(heard, signal), session_bus, said, "lockers"
            )
        self.status = "; ".join(said)
        return bool(self._watches)

    def _watch(
        self,
        rules: list[dict[str, str]],
        on_signal: Callable[[BusSignal], None],
        address: str | None,
        said: list[str],
        what: str,
    ) -> None:
        try:
            self._watches.append(SignalWatch(rules, on_signal, address, "domi-unlock-watch"))
        except BusError as error:
            said.append(f"cannot listen for {what}: {error}")
            return
        if what == "lockers":
            said.append("listening to the screen lockers' ActiveChanged")
        else:
            said.append(f"listening to logind's Unlock and LockedHint of {what}")

    @staticmethod
    def _session_path(said: list[str]) -> str | None:
        try:
            with BusCaller(system_bus_address()) as caller:
                (path,) = caller.call(
                    LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "GetSessionByPID", "u",
                    os.getpid(),
                )  # fmt: skip
        except BusError as error:
            said.append(f"not in a logind session: {error}")
            return None
        return str(path)

    def stop(self) -> None:
        watches, self._watches = self._watches, []
        for watch in watches:
            watch.stop()


def _from_logind(heard: UnlockHeard, signal: BusSignal) -> None:
    if signal.member == "Unlock":
        heard.unlocked("logind Unlock")
    elif signal.member == "Lock":
        heard.locked()
    elif signal.member == "PropertiesChanged" and signal.body and signal.body[0] == SESSION:
        changed = signal.body[1] if len(signal.body) > 1 else {}
        hint = changed.get("LockedHint") if isinstance(changed, dict) else None
        if hint is not None:
            locked = bool(hint[1])
            if locked:
                heard.locked()
            else:
                heard.unlocked("logind LockedHint")


def _from_locker(heard: UnlockHeard, signal: BusSignal) -> None:
    if signal.member != "ActiveChanged" or not signal.body:
        return
    if signal.body[0]:
        heard.locked()
    else:
        heard.unlocked(f"{signal.interface} ActiveChanged")
