"""Jobs that run because the user stepped away, when the user comes back: paused where they are
and let go on at the next away, or stopped to run once more then (``scheduler.away``).

Owned by the ``ConditionKeeper``, on the loop thread. While such a job runs the session is looked
at every ``LOOK`` (no desktop signals an input; a look is one short D-Bus call), so a job is
paused well within a second of the user's return.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol

from domi_desktop.model import OnReturn, Schedule, SystemState
from domi_desktop.ports import Clock, Loop, TimerHandle
from domi_desktop.scheduler.away import Pauses, ReturnStep, away_words, on_return

log = logging.getLogger(__name__)

LOOK = 0.25
"""Seconds between looks at the session while a job that waited for an away runs."""
CAME_BACK = "stopped: you came back to the computer"


class AwayHost(Protocol):
    clock: Clock
    loop: Loop

    def stop_run(self, run_id: int, reason: str = ...) -> bool: ...

    def pause_run(self, run_id: int, paused: bool) -> bool: ...


@dataclass
class _Watched:
    schedule: Schedule
    pauses: Pauses = field(default_factory=Pauses)
    paused_at: float | None = None
    stopped: bool = False


class AwayKeeper:
    def __init__(self, host: AwayHost, read: Callable[[], SystemState]) -> None:
        self._host = host
        self._read = read
        """The session now, not a cached reading."""
        self._watched: dict[int, _Watched] = {}
        self._anyway: set[int] = set()
        self._timer: TimerHandle | None = None

    def at_deadline(self, run_id: int) -> None:
        """The run starts anyway, its wait for an away over: the user who never left is there,
        and pausing (or stopping) it for them would keep the deadline's promise to run it."""
        self._anyway.add(run_id)

    def started(self, run_id: int, schedule: Schedule) -> bool:
        """Whether the job is looked after (the session is then read for it)."""
        conditions = schedule.policies.conditions
        if run_id in self._anyway:
            self._anyway.discard(run_id)
            return False
        if conditions.away is None or conditions.on_return is OnReturn.carry_on:
            return False
        self._watched[run_id] = _Watched(schedule)
        self._arm()
        return True

    def ended(self, run_id: int) -> Schedule | None:
        """The job is over; its schedule when it was stopped because the user came back (one
        new run then waits for the next away)."""
        self._anyway.discard(run_id)
        watched = self._watched.pop(run_id, None)
        if not self._watched and self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return watched.schedule if watched is not None and watched.stopped else None

    def schedules(self) -> list[Schedule]:
        """Those of the jobs looked after: the session's idle time is read for them."""
        return [watched.schedule for watched in self._watched.values()]

    def with_pauses(self, run_id: int, note: str | None) -> str | None:
        """The run's ``note`` with ``paused 3 times, 11 min`` after it, once the run ends."""
        watched = self._watched.get(run_id)
        if watched is None:
            return note
        self._settle(watched)
        paused = away_words(None, watched.pauses)
        if paused is None:
            return note
        return paused if note is None else f"{note}; {paused}"

    def _arm(self) -> None:
        if self._timer is None and self._watched:
            self._timer = self._host.loop.call_later(LOOK, self._look)

    def _look(self) -> None:
        self._timer = None
        if not self._watched:
            return
        state = self._read()
        for run_id, watched in list(self._watched.items()):
            if watched.stopped:
                continue
            conditions = watched.schedule.policies.conditions
            step = on_return(conditions, state, paused=watched.paused_at is not None)
            if step is ReturnStep.pause and self._host.pause_run(run_id, True):
                watched.paused_at = self._host.clock.monotonic()
                log.info("run %s paused: you came back to the computer", run_id)
            elif step is ReturnStep.resume and self._host.pause_run(run_id, False):
                self._settle(watched)
                log.info("run %s goes on: you stepped away again", run_id)
            elif step is ReturnStep.stop:
                watched.stopped = True
                self._host.stop_run(run_id, CAME_BACK)
        self._arm()

    def _settle(self, watched: _Watched) -> None:
        if watched.paused_at is not None:
            span = self._host.clock.monotonic() - watched.paused_at
            watched.pauses = watched.pauses.add(timedelta(seconds=span))
            watched.paused_at = None

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._watched.clear()
        self._anyway.clear()
