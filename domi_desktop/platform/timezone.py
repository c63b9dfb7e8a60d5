"""Notices that the OS time zone changed (travel, the user's settings), so ``local`` schedules re-plan."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from domi_desktop.cron import local_zone, local_zone_name


class ZoneWatcher:
    """``check()`` says whether the OS zone changed since the last check (or since construction).

    A change is another zone name, or another UTC offset at the instant of the previous check: a
    zone swapped under the same name (or under none, a copied /etc/localtime) shows there, while a
    DST transition, which changes today's offset but not the zone, does not count.
    ``now`` returns the current instant, timezone-aware (``Clock.now``).
    """

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now
        self._name, self._at, self._offset = self._snapshot()

    def check(self) -> bool:
        previous_name, previous_at, previous_offset = self._name, self._at, self._offset
        self._name, self._at, self._offset = self._snapshot()
        return self._name != previous_name or _offset_at(previous_at) != previous_offset

    @property
    def zone_name(self) -> str | None:
        """The OS zone's IANA name at the last check, when it can be told."""
        return self._name

    def _snapshot(self) -> tuple[str | None, datetime, timedelta | None]:
        at = self._now()
        return local_zone_name(), at, _offset_at(at)


def _offset_at(instant: datetime) -> timedelta | None:
    return instant.astimezone(local_zone()).utcoffset()
