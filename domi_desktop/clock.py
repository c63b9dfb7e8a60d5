"""Clock and timer interfaces. The core is handed these; only ``SystemClock`` reads the real clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The wall clock as an aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (it may stop while the machine sleeps)."""
        ...


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Timer(Protocol):
    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Arm ``callback`` to run once after ``delay`` seconds; the handle cancels it."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()
