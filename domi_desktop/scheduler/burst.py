"""The catch-up burst limit: after a wake, at most K catch-up runs go at once, the rest in due order.

Pure admission, no clock: the runtime ``submit``s each catch-up run it has claimed (a run row, so
exactly once is already decided) and starts what is returned; when one ends, ``done`` returns the
next ones. A queued run is recorded like any run about to start (``late`` with its own ``due``);
it only starts later.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from datetime import datetime
from typing import Generic, TypeVar

from domi_desktop.errors import ParamError

K = TypeVar("K", bound=Hashable)

DEFAULT_LIMIT = 4


class BurstQueue(Generic[K]):
    """At most ``limit`` admitted keys at a time; the others wait, earliest due first (ties in
    submission order). A key already admitted or queued is not taken twice."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = _checked(limit)
        self._running: set[K] = set()
        self._queued: list[tuple[datetime, int, K]] = []
        self._queued_keys: set[K] = set()
        self._order = itertools.count()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def running(self) -> frozenset[K]:
        return frozenset(self._running)

    @property
    def queued(self) -> tuple[K, ...]:
        """The waiting keys in the order they will start."""
        return tuple(key for _, _, key in sorted(self._queued))

    def submit(self, key: K, due: datetime) -> tuple[K, ...]:
        """Queue ``key``; the keys that may start now (``key`` itself when there is room)."""
        if key in self._running or key in self._queued_keys:
            return ()
        heapq.heappush(self._queued, (due, next(self._order), key))
        self._queued_keys.add(key)
        return self._admit()

    def done(self, key: K) -> tuple[K, ...]:
        """``key`` ended (or was dropped while queued); the keys that may start now."""
        if key in self._queued_keys:
            self._queued_keys.discard(key)
            self._queued = [entry for entry in self._queued if entry[2] != key]
            heapq.heapify(self._queued)
        self._running.discard(key)
        return self._admit()

    def resize(self, limit: int) -> tuple[K, ...]:
        """A new limit (the setting changed); the keys that may start now. Running ones go on."""
        self._limit = _checked(limit)
        return self._admit()

    def _admit(self) -> tuple[K, ...]:
        started: list[K] = []
        while self._queued and len(self._running) < self._limit:
            _, _, key = heapq.heappop(self._queued)
            self._queued_keys.discard(key)
            self._running.add(key)
            started.append(key)
        return tuple(started)


def _checked(limit: int) -> int:
    if limit < 1:
        raise ParamError("catch_up_burst", f"must be at least 1, not {limit}")
    return limit
