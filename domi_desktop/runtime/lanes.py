"""The runtime's bookkeeping of runs in progress: one lane per concurrency key, holding the runs
that are running and at most one waiting for them (``Overlap.queue``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from domi_desktop.actions import RunningAction
from domi_desktop.events import FireEvent
from domi_desktop.model import Schedule, Trigger

REPLACED = "stopped: replaced by a newer run"


@dataclass
class Active:
    """A run this process is carrying out: waiting to start, running, or between retries."""

    run_id: int
    schedule: Schedule
    trigger: Trigger
    attempt: int = 0
    handle: RunningAction | None = None
    started_at: datetime | None = None


@dataclass
class Lane:
    """The runs of one concurrency key: those running and at most one waiting."""

    running: dict[int, Active] = field(default_factory=dict)
    waiting: Active | None = None
    recording: int = 0
    """Manual and resumed runs handed to the recorder, not on record yet: as busy as running
    ones, or a wake in between would start a second copy beside them."""

    @property
    def busy(self) -> bool:
        return bool(self.running) or self.recording > 0


def lane_key(schedule: Schedule) -> str:
    """Schedules sharing a concurrency key share a lane; any other has one of its own."""
    return schedule.policies.concurrency_key or f"schedule:{schedule.id}"


def manual_event(schedule: Schedule, run_id: int, trigger: Trigger, now: datetime) -> FireEvent:
    """The announcement of a run outside the calendar (manual or resumed): it has no due."""
    return FireEvent(
        schedule_id=schedule.id,
        run_id=run_id,
        name=schedule.name,
        tz=schedule.tz,
        due=None,
        fired_at=now,
        trigger=trigger,
    )
