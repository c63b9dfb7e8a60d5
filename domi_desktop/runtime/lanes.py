"""The runtime's bookkeeping of runs in progress: one lane per concurrency key, holding the runs
that are running and at most one waiting for them (``Overlap.queue``), and the one overlap rule
every start passes (``admission``): a wake's fire, a Run now, a session trigger's run, a run whose
conditions came. A lane is busy from the moment a start is decided, not from its record: the
recorder may take seconds (another program holding the database's write lock), and a start
decided in between must see the first."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

from domi_desktop.actions import RunningAction
from domi_desktop.events import FireEvent
from domi_desktop.model import Overlap, Schedule, Trigger

REPLACED = "stopped: replaced by a newer run"


class Admission(Enum):
    start = "start"
    queue = "queue"
    """It waits in its lane for the running run (``Overlap.queue``)."""
    busy = "busy"
    """Not started: its lane is busy."""


def admission(
    overlap: Overlap, running: bool, waiting: bool, *, may_queue: bool, may_replace: bool = True
) -> Admission:
    """Whether a start goes ahead beside a lane's runs: ``running``, the lane has a run running
    or decided; ``waiting``, one queued behind it. ``may_queue``: the start can wait in the lane
    (a wake's fire can; a Run now answers at once, and a run released by its conditions waits on
    as it is). ``may_replace``: it may stop the running ones (``Overlap.replace``)."""
    if not running or overlap is Overlap.parallel or (overlap is Overlap.replace and may_replace):
        return Admission.start
    if overlap is Overlap.queue and may_queue and not waiting:
        return Admission.queue
    return Admission.busy


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
    """Starts decided and handed to the recorder, not on record yet (a wake's fires, manual,
    triggered and resumed runs): as busy as running ones."""

    @property
    def busy(self) -> bool:
        return bool(self.running) or self.recording > 0


class Lanes(dict[str, Lane]):
    """The lanes by key; only those with a run in them (``Runtime._release`` lets an idle one go:
    after a catch-up of 10,000 schedules, asking what runs would otherwise walk 10,000). A run
    enters a lane's ``running`` with ``run`` and leaves it with ``end``, which keep the runs in
    progress indexed by id: ``app.status`` asks for them every few milliseconds during a burst,
    and walking 10,000 lanes each time held the GUI loop."""

    def __init__(self) -> None:
        super().__init__()
        self._running: dict[int, Active] = {}

    def admit(self, schedule: Schedule, *, may_queue: bool, may_replace: bool = True) -> Admission:
        lane = self.get(lane_key(schedule))
        if lane is None:
            return Admission.start
        return admission(
            schedule.policies.overlap,
            lane.busy,
            lane.waiting is not None,
            may_queue=may_queue,
            may_replace=may_replace,
        )

    def reserve(self, schedule: Schedule) -> Lane:
        """The schedule's lane, busy with one more start on its way to the record."""
        lane = self.setdefault(lane_key(schedule), Lane())
        lane.recording += 1
        return lane

    def recorded(self, lane: Lane, key: str) -> None:
        """A reserved start is on record (or failed to be): a lane left idle goes."""
        lane.recording -= 1
        if not lane.busy and lane.waiting is None and self.get(key) is lane:
            del self[key]

    def run(self, lane: Lane, active: Active) -> None:
        lane.running[active.run_id] = active
        self._running[active.run_id] = active

    def start(self, lane: Lane, active: Active, *, replacing: bool) -> None:
        """``active`` runs in ``lane``; ``replacing``: the runs there are stopped for it."""
        if replacing and active.schedule.policies.overlap is Overlap.replace:
            for other in lane.running.values():
                if other.handle is not None:
                    other.handle.stop(REPLACED)
        self.run(lane, active)

    def end(self, lane: Lane, run_id: int) -> Active | None:
        self._running.pop(run_id, None)
        return lane.running.pop(run_id, None)

    def run_ids(self) -> set[int]:
        """The runs in progress: started, or about to start."""
        return set(self._running)

    def by_schedule(self) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for active in self._running.values():
            found.setdefault(active.schedule.id, []).append(active.run_id)
        return found

    def active(self, run_id: int) -> Active | None:
        """The run ``run_id`` if a lane runs it."""
        return self._running.get(run_id)

    def holding(self, run_id: int) -> Active | None:
        """The run ``run_id`` if a lane runs it or has it waiting; a waiting one is moved to the
        running ones (the caller ends it)."""
        for lane in self.values():
            if lane.waiting is not None and lane.waiting.run_id == run_id:
                self.run(lane, lane.waiting)
                lane.waiting = None
                break
        return self.active(run_id)

    def take_unstarted(self, parked: list[Active]) -> list[Active]:
        """At quit: each lane's waiting run, and those of ``parked`` (catch-ups not admitted yet)
        taken out of their lanes: none of them will start."""
        unstarted: list[Active] = []
        for lane in self.values():
            if lane.waiting is not None:
                unstarted.append(lane.waiting)
                lane.waiting = None
        for active in parked:  # each in its own lane: a quit after a burst met 10,000 x 10,000
            home = self.get(lane_key(active.schedule))
            if home is not None and self.end(home, active.run_id) is not None:
                unstarted.append(active)
        return unstarted


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
