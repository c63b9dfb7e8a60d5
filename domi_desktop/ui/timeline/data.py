"""What the Timeline shows of a stretch of time: the store's ``timeline`` (``story.dues.Timeline``:
each schedule's dues with their stories, its runs, and the machine's spans)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from domi_desktop.ports import RunReader
from domi_desktop.story.dues import Lane, Timeline

__all__ = ["Lane", "Timeline", "TimelineReader"]


@runtime_checkable
class TimelineReader(RunReader, Protocol):
    def timeline(
        self, start: datetime, end: datetime, now: datetime, schedule_id: int | None = None
    ) -> Timeline: ...
