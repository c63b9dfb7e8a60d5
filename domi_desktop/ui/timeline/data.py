"""What the Timeline shows of a stretch of time, read from the store in a few queries: each
schedule's dues with their stories (``story.dues``), its runs, and the machine's spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from domi_desktop.model import Run
from domi_desktop.ports import RunReader
from domi_desktop.story import MachineSpan
from domi_desktop.story.dues import DueKind, DueStory, explain
from domi_desktop.ui.history.dues import story_of

CLAIMED_WITHIN = timedelta(days=7)
"""The spans after the stretch that may still explain a due in it (a catch-up days later)."""


@runtime_checkable
class TimelineReader(RunReader, Protocol):
    def runs_between(
        self, start: datetime, end: datetime, schedule_id: int | None = None
    ) -> list[Run]: ...

    def machine_spans(
        self, start: datetime, end: datetime, machine: str | None = None
    ) -> list[MachineSpan]: ...


@dataclass(frozen=True, slots=True)
class Lane:
    schedule_id: int
    name: str
    stories: tuple[DueStory, ...]
    """Its dues in the stretch, by due."""
    runs: tuple[Run, ...]
    """Its runs that ran (or wait) in the stretch, manual ones too: the bars."""


@dataclass(frozen=True, slots=True)
class TimelineData:
    start: datetime
    end: datetime
    now: datetime
    spans: tuple[MachineSpan, ...]
    lanes: tuple[Lane, ...]

    def story_of(self, run_id: int) -> DueStory | None:
        for lane in self.lanes:
            for story in lane.stories:
                if story.run.id == run_id:
                    return story
        return None


def load(
    store: TimelineReader,
    start: datetime,
    end: datetime,
    now: datetime,
    schedule_id: int | None = None,
) -> TimelineData:
    labels = store.schedule_labels(None if schedule_id is None else [schedule_id])
    spans = store.machine_spans(start, end + CLAIMED_WITHIN)
    by_schedule: dict[int, list[Run]] = {key: [] for key in labels}
    for run in store.runs_between(start, end, schedule_id):
        by_schedule.setdefault(run.schedule_id, []).append(run)
    lanes = []
    for key, runs in by_schedule.items():
        stories = [_complete(store, story, now) for story in explain(runs, spans, now)]
        name = labels.get(key, (f"#{key}", ""))[0]
        lanes.append(
            Lane(key, name, tuple(s for s in stories if start <= s.due < end), tuple(runs))
        )
    return TimelineData(start, end, now, tuple(spans), tuple(lanes))


def _complete(store: RunReader, story: DueStory, now: datetime) -> DueStory:
    """A missed due whose catch-up lies past the stretch is read the way History reads it."""
    if story.kind is not DueKind.missed or story.served_by is not None:
        return story
    return story_of(store, story.run, now) or story


def dues_of(data: TimelineData) -> Sequence[DueStory]:
    return [story for lane in data.lanes for story in lane.stories]
