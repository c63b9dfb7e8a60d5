"""What a window may know of the running engine: one frozen picture, taken on the engine's thread
and handed to the GUI thread whole, so a window never reads a structure the engine is changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

from domi_desktop.model import Schedule

if TYPE_CHECKING:
    from domi_desktop.runtime.engine import Runtime

SOONEST_KEPT = 40
"""Upcoming fires the picture carries: the tray's menu shows 20, the tooltip one."""


@dataclass(frozen=True, slots=True)
class WaitingRun:
    """A run held back by its conditions, named for the tray."""

    run_id: int
    schedule_id: int
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class EngineState:
    paused: bool = False
    running: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Schedule id -> its runs in progress (started or about to start)."""
    waiting: tuple[WaitingRun, ...] = ()
    """Runs waiting for their conditions, oldest first."""
    soonest: tuple[tuple[datetime, Schedule], ...] = ()
    """The next fires, soonest first (at most ``SOONEST_KEPT``)."""
    next_fires: Mapping[int, float] = field(default_factory=dict)
    """Schedule id -> its next fire as a UTC timestamp (absent: none planned)."""

    def running_runs(self) -> list[int]:
        return sorted(run for runs in self.running.values() for run in runs)

    def next_fire(self, schedule_id: int) -> datetime | None:
        stamp = self.next_fires.get(schedule_id)
        return None if stamp is None else datetime.fromtimestamp(stamp, UTC)


def picture(runtime: Runtime) -> EngineState:
    """The engine as it is now; on the engine's thread."""
    known = runtime.known_schedules()
    waiting = tuple(
        WaitingRun(held.run_id, held.schedule_id, known[held.schedule_id].name, held.reason)
        for held in sorted(runtime.keeper.held.values(), key=lambda h: h.run_id)
        if held.schedule_id in known
    )
    driver = runtime.driver
    return EngineState(
        paused=driver.paused,
        running=MappingProxyType(
            {schedule: tuple(runs) for schedule, runs in runtime.running_by_schedule().items()}
        ),
        waiting=waiting,
        soonest=tuple(driver.soonest_n(SOONEST_KEPT)),
        next_fires=MappingProxyType(driver.next_fires()),
    )
