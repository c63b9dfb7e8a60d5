"""The OS time zone: what it is now (``local``), and noticing when it changes.

tzlocal reads it the way each OS keeps it: ``TZ``; on Linux /etc/timezone, /etc/sysconfig/clock
and the /etc/localtime link (or the copied file itself); on macOS the /etc/localtime link; on
Windows the registry's zone name, mapped to its IANA name with the CLDR table. It is chosen over
``QTimeZone.systemTimeZoneId()`` because the CLI and the headless service must not load Qt, and
because it hands back a zoneinfo zone, the type every other part of the app computes with.

When nothing says which zone this is, ``local`` is UTC, visibly: a logged warning, and a zone and a
name (``UNKNOWN_ZONE_NAME``) that say so wherever they are shown.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Protocol

import tzlocal

from domi_desktop.cron import set_local_resolver

UNKNOWN_ZONE_NAME = "UTC (OS zone unknown)"
_UNKNOWN_ZONE = timezone(timedelta(0), UNKNOWN_ZONE_NAME)
_UNNAMED_KEY = "local"
"""The key tzlocal gives a zone read from an /etc/localtime file that names no zone."""

_WATCHED = (
    "/etc/localtime",
    "/etc/timezone",
    "/etc/sysconfig/clock",
    "/etc/conf.d/clock",
    "/var/db/zoneinfo",
    "/usr/local/etc/localtime",
)
"""The files tzlocal reads on Linux, macOS and the BSDs: the zone is re-read when one changes."""

_log = logging.getLogger(__name__)


class ZoneSource(Protocol):
    """What is used of tzlocal (its module for this OS), so tests can drive another OS's."""

    def reload_localzone(self) -> tzinfo: ...

    def get_localzone_name(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class OsZone:
    zone: tzinfo
    name: str | None
    """The IANA name; ``UNKNOWN_ZONE_NAME`` when the zone is a fallback; ``None`` when the OS
    has a zone but does not name it (an /etc/localtime copied rather than linked)."""


_unknown_reason: str | None = None
"""Why the zone was last unknown: the warning is logged once per spell, not per evaluation."""


def read_os_zone(source: ZoneSource = tzlocal) -> OsZone:
    """The OS zone as it is now, read afresh (the user may have changed it, or travelled)."""
    global _unknown_reason
    with warnings.catch_warnings(record=True) as caught:
        # tzlocal reports doubts as warnings; they go to the log, never to the user's terminal.
        warnings.simplefilter("always")
        try:
            zone: tzinfo | None = source.reload_localzone()
            name = source.get_localzone_name()
            reason = "no TZ variable and no zone setting found"
        except (LookupError, ValueError, OSError) as error:
            # str() of a KeyError (ZoneInfoNotFoundError) is the repr of its message.
            message = str(error.args[0]) if error.args else type(error).__name__
            zone, name, reason = None, None, " ".join(message.split())
    for warning in caught:
        _log.info("tzlocal: %s", warning.message)
    # Without a name, TZ pointing at a file or an /etc/localtime file gave the zone; neither
    # is tzlocal's UTC default.
    read = name is not None or os.environ.get("TZ") or getattr(zone, "key", None) == _UNNAMED_KEY
    if zone is not None and read:
        _unknown_reason = None
        return OsZone(zone, name)
    if reason != _unknown_reason:
        _log.warning("the OS time zone cannot be determined (%s); 'local' is UTC", reason)
        _unknown_reason = reason
    return OsZone(_UNKNOWN_ZONE, UNKNOWN_ZONE_NAME)


_last: tuple[tuple[object, ...], OsZone] | None = None


def current_os_zone() -> OsZone:
    """``read_os_zone()``, re-read only when ``TZ`` or what tzlocal reads changed.

    A full read costs about a millisecond (tzlocal tries each part of the /etc/localtime link
    as a zone name; on Windows it opens registry keys: 228 ms a read under Wine), and ``local`` is
    resolved at every evaluation, thousands of times in one repaint of the History; a stamp of
    its inputs costs microseconds.
    """
    global _last
    stamp = _stamp()
    if _last is not None and _last[0] == stamp:
        return _last[1]
    os_zone = read_os_zone()
    _last = (stamp, os_zone)
    return os_zone


FILES_LOOKED_AT_EVERY = 1.0
"""Seconds between two looks at tzlocal's files: ``local`` is resolved for every time shown
(thousands in one repaint of the History), and a zone a second late is no loss."""
_files: tuple[float, tuple[object, ...]] | None = None


WINDOWS_TRUSTED_FOR = 60.0
"""Seconds a Windows read is kept without word of a change: the hidden window's messages are the
way (``windows_settings_changed``); this bounds a process that has no such window."""
_windows_changes = 0


def windows_settings_changed() -> None:
    """Windows broadcast ``WM_TIMECHANGE`` or ``WM_SETTINGCHANGE``: read the registry again."""
    global _windows_changes
    _windows_changes += 1


def _stamp() -> tuple[object, ...]:
    if sys.platform == "win32":
        period = int(time.monotonic() // WINDOWS_TRUSTED_FOR)
        return (os.environ.get("TZ"), _windows_changes, period)
    global _files
    now = time.monotonic()
    if _files is None or now - _files[0] >= FILES_LOOKED_AT_EVERY:
        stamp: list[object] = []
        for path in _WATCHED:
            try:
                info = os.lstat(path)
            except OSError:
                stamp.append(None)
            else:
                stamp.append((info.st_ino, info.st_mtime_ns, info.st_size))
        _files = (now, tuple(stamp))
    return (os.environ.get("TZ"), *_files[1])


def local_zone_name() -> str | None:
    """The OS zone's name for people: see ``OsZone.name``."""
    return current_os_zone().name


def install_os_zone() -> None:
    """Make ``local`` in the cron core mean the OS zone as it is at each evaluation."""
    set_local_resolver(_os_zone)


def _os_zone() -> tzinfo:
    return current_os_zone().zone


class ZoneWatcher:
    """``check()`` says whether the OS zone changed since the last check (or since construction).

    A change is another zone name, or another UTC offset at the instant of the previous check: a
    zone swapped under the same name (or under none, a copied /etc/localtime) shows there, while a
    DST transition, which changes today's offset but not the zone, does not count.
    ``now`` returns the current instant, timezone-aware (``Clock.now``).
    """

    def __init__(
        self, now: Callable[[], datetime], read: Callable[[], OsZone] = current_os_zone
    ) -> None:
        self._now = now
        self._read = read
        self._name, self._at, self._offset = self._snapshot(read())

    def check(self) -> bool:
        previous_name, previous_at, previous_offset = self._name, self._at, self._offset
        os_zone = self._read()
        moved = previous_at.astimezone(os_zone.zone).utcoffset() != previous_offset
        self._name, self._at, self._offset = self._snapshot(os_zone)
        return self._name != previous_name or moved

    @property
    def zone_name(self) -> str | None:
        """The OS zone's name at the last check (see ``OsZone.name``)."""
        return self._name

    def _snapshot(self, os_zone: OsZone) -> tuple[str | None, datetime, timedelta | None]:
        at = self._now()
        return os_zone.name, at, at.astimezone(os_zone.zone).utcoffset()
