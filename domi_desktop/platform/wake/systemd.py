"""Linux: a transient systemd **user** timer with ``WakeSystem=yes``, set over the session bus
(``StartTransientUnit`` on the user manager, as ``systemd-run --user --on-calendar`` does).

A user manager can arm a waking timer only when it holds ``CAP_WAKE_ALARM``, which systemd 254
gave ``user@.service``; earlier, the timer is set but the machine sleeps through it. So both are
looked at, not guessed: the manager's ``Version`` property and the effective capabilities of the
process that owns ``org.freedesktop.systemd1`` on the bus.

Each arm starts a timer of a new name (``domi-desktop-wake-PID-N``) and then stops the previous
one: a stopped transient unit lingers until systemd collects it, and starting one of the same name
meanwhile fails. The first arm also stops the timers left by an instance that died. The timer
starts a service that runs ``true``: waking is the point, and the app notices the resume itself.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domi_desktop.platform.wake.base import (
    CAP_WAKE_ALARM,
    epoch_seconds,
    has_capability,
    utc_text,
)
from domi_desktop.platform.wake.dbus import call

log = logging.getLogger("domi_desktop.platform.wake")

SYSTEMD = "org.freedesktop.systemd1"
SYSTEMD_PATH = "/org/freedesktop/systemd1"
MANAGER = "org.freedesktop.systemd1.Manager"
FIRST_WAKING_VERSION = 254
"""The first systemd whose user manager holds ``CAP_WAKE_ALARM``."""
UNIT_PREFIX = "domi-desktop-wake"

_names = itertools.count(1)


class SystemdWakeAlarm:
    """``WakeAlarm`` through the session's systemd user manager; ``address`` is the session bus
    (``None``: ``$DBUS_SESSION_BUS_ADDRESS``)."""

    via = "a systemd user timer (WakeSystem=yes)"

    def __init__(self, address: str | None = None, *, proc: Path = Path("/proc")) -> None:
        self._address = address
        self._proc = proc
        self._unit: str | None = None
        self._status = "not armed"
        self._looked = False
        self._why: str | None = None
        self._swept = False

    @property
    def status(self) -> str:
        return self._status

    def capability(self) -> str | None:
        if not self._looked:
            try:
                self._why = self._look()
            except Exception as error:  # any bus failure: the manager cannot be used
                self._why = f"no systemd user manager on the session bus: {error}"
            self._looked = True
        return self._why

    def arm(self, at: datetime) -> bool:
        unit = f"{UNIT_PREFIX}-{os.getpid()}-{next(_names)}"
        calendar = calendar_text(at)
        try:
            with self._connect() as conn:
                _call(
                    conn, SYSTEMD_PATH, MANAGER, "StartTransientUnit", "ssa(sv)a(sa(sv))",
                    (f"{unit}.timer", "replace", timer_properties(calendar),
                     [(f"{unit}.service", service_properties())]),
                )  # fmt: skip
                previous, self._unit = self._unit, unit
                if previous is not None:
                    _stop(conn, previous)
                if not self._swept:
                    self._swept = True
                    _sweep(conn)
        except Exception as error:  # the bus, the manager, a refusal: said, never raised
            self._status = f"cannot arm {self.via}: {error}"
            self._looked = False  # look again next time: the manager may have gone
            return False
        self._status = f"the machine wakes at {utc_text(at)} ({self.via} {unit}.timer)"
        return True

    def cancel(self) -> None:
        unit, self._unit = self._unit, None
        self._status = "not armed"
        if unit is None:
            return
        try:
            with self._connect() as conn:
                _stop(conn, unit)
        except Exception as error:
            log.warning("cannot stop the wake timer %s: %s", unit, error)

    def _look(self) -> str | None:
        with self._connect() as conn:
            version = _call(
                conn, SYSTEMD_PATH, "org.freedesktop.DBus.Properties", "Get", "ss",
                (MANAGER, "Version"),
            )[0][1]  # fmt: skip
            pid = _call(
                conn, "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixProcessID", "s", (SYSTEMD,), bus_name="org.freedesktop.DBus",
            )[0]  # fmt: skip
        major = _major(str(version))
        if major is None or major < FIRST_WAKING_VERSION:
            return (
                f"the systemd user manager is version {version}: its timers wake the machine "
                f"from systemd {FIRST_WAKING_VERSION} on"
            )
        capable = has_capability(int(pid), CAP_WAKE_ALARM, self._proc)
        if capable is None:
            return f"cannot read the capabilities of the systemd user manager (pid {pid})"
        if not capable:
            return (
                f"the systemd user manager (pid {pid}) lacks CAP_WAKE_ALARM "
                "(user@.service grants it from systemd 254 on)"
            )
        return None

    def _connect(self) -> Any:
        from jeepney.io.blocking import open_dbus_connection

        return open_dbus_connection(self._address or "SESSION")


def calendar_text(at: datetime) -> str:
    """The ``OnCalendar=`` of one instant, to the second (rounded up): ``2026-12-02 02:59:30 UTC``."""
    return utc_text(datetime.fromtimestamp(epoch_seconds(at), UTC))


def timer_properties(calendar: str) -> list[tuple[str, tuple[str, Any]]]:
    """The transient timer: once at ``calendar``, waking the machine, to the second (systemd's
    default accuracy is a minute), gone once it has elapsed."""
    return [
        ("Description", ("s", "domi-desktop: wake the computer to run a schedule")),
        ("OnCalendar", ("s", calendar)),
        ("WakeSystem", ("b", True)),
        ("AccuracyUSec", ("t", 1_000_000)),
        ("RemainAfterElapse", ("b", False)),
    ]


def service_properties() -> list[tuple[str, tuple[str, Any]]]:
    true = shutil.which("true") or "/bin/true"
    return [
        ("Description", ("s", "domi-desktop: the machine is awake to run a schedule")),
        ("ExecStart", ("a(sasb)", [(true, [true], False)])),
    ]


def _major(version: str) -> int | None:
    found = re.match(r"\s*v?(\d+)", version)
    return int(found.group(1)) if found else None


def _call(
    conn: Any,
    path: str,
    interface: str,
    member: str,
    signature: str,
    body: tuple[Any, ...],
    *,
    bus_name: str = SYSTEMD,
) -> Any:
    return call("", bus_name, path, interface, member, signature, body, conn=conn)


def _sweep(conn: Any) -> None:
    """Stop the wake timers an app that died left behind (a transient unit outlives its maker):
    each would still wake the machine once. Those of a live process are another instance's."""
    found = _call(
        conn, SYSTEMD_PATH, MANAGER, "ListUnitsByPatterns", "asas", ([], [f"{UNIT_PREFIX}-*"])
    )[0]  # fmt: skip
    for unit in found:
        name = re.fullmatch(rf"({UNIT_PREFIX}-(\d+)-\d+)\.timer", str(unit[0]))
        if name is not None and not _alive(int(name.group(2))):
            log.info("stopping %s, left by a domi-desktop that is gone", unit[0])
            _stop(conn, name.group(1))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _stop(conn: Any, unit: str) -> None:
    try:
        _call(conn, SYSTEMD_PATH, MANAGER, "StopUnit", "ss", (f"{unit}.timer", "replace"))
    except Exception as error:  # already elapsed and collected: nothing to stop
        log.info("wake timer %s.timer not stopped: %s", unit, error)
