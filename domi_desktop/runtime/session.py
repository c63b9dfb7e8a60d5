"""Session triggers carried out (issue 23): at login, at unlock, on resume and before sleep, each
schedule that asks for the moment runs once, within its overlap policy, at most once per its
``min_interval``; the run is recorded with the moment as its trigger. The decisions are
``scheduler.session``'s; the runs are started as a Run now is (``ManualRuns``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from domi_desktop.errors import DomiError
from domi_desktop.model import Schedule, Trigger
from domi_desktop.runtime.manual import ManualHost, ManualRuns
from domi_desktop.scheduler.session import allowed, wants

log = logging.getLogger(__name__)

HISTORY = 200
"""Runs of a schedule read back for when a trigger last fired it (once per schedule and trigger)."""


class SessionHost(ManualHost, Protocol):
    """What session runs need of the runtime (``engine.Runtime``)."""

    def known_schedules(self) -> dict[int, Schedule]: ...

    def not_here(self) -> dict[int, str]: ...


class SessionRuns:
    def __init__(self, runtime: SessionHost) -> None:
        self._rt = runtime
        self._manual = ManualRuns(runtime)
        self._last: dict[tuple[int, Trigger], datetime | None] = {}
        self.started: dict[int, Trigger] = {}
        """Run id -> the trigger that started it, for the runs on record."""
        self.recording: dict[Trigger, int] = {}
        """Runs asked for and not on record yet, by trigger."""

    def fire(self, trigger: Trigger, on_recorded: Callable[[], None] | None = None) -> int:
        """Every schedule that asks for ``trigger`` runs now; returns how many were asked to.
        ``on_recorded`` is called once each of them is on record (or could not be)."""
        now = self._rt.clock.now()
        elsewhere = self._rt.not_here()
        chosen = [
            s for s in self._rt.known_schedules().values()
            if s.enabled and s.id not in elsewhere and wants(s.policies.session, trigger)
        ]  # fmt: skip
        count = 0
        for schedule in sorted(chosen, key=lambda s: s.id):
            if not allowed(schedule.policies.session, self._last_fired(schedule, trigger), now):
                log.info(
                    "%s: %r ran by it less than its interval ago", trigger.value, schedule.name
                )
                continue
            before = self._last[(schedule.id, trigger)]
            self._last[(schedule.id, trigger)] = now
            self.recording[trigger] = self.recording.get(trigger, 0) + 1
            recorded = self._recorded(schedule.id, trigger, before, on_recorded)
            self._manual.run(schedule.id, trigger, None, recorded)
            count += 1
        return count

    def _recorded(
        self,
        schedule_id: int,
        trigger: Trigger,
        before: datetime | None,
        then: Callable[[], None] | None,
    ) -> Callable[[int | Exception], None]:
        def recorded(outcome: int | Exception) -> None:
            self.recording[trigger] -= 1
            if isinstance(outcome, Exception):
                # Not run (busy, gone): the interval counts from the last run that was.
                self._last[(schedule_id, trigger)] = before
                log.info("%s: a run could not start: %s", trigger.value, outcome)
            else:
                self.started[outcome] = trigger
            if then is not None:
                then()

        return recorded

    def running(self, trigger: Trigger) -> list[int]:
        """The runs ``trigger`` started that are still running here."""
        live = {run_id for lane in self._rt.lanes.values() for run_id in lane.running}
        for run_id in [r for r in self.started if r not in live]:
            del self.started[run_id]
        return sorted(r for r, t in self.started.items() if t is trigger)

    def _last_fired(self, schedule: Schedule, trigger: Trigger) -> datetime | None:
        key = (schedule.id, trigger)
        if key not in self._last:
            try:
                runs = self._rt.store.runs(schedule_id=schedule.id, limit=HISTORY)
            except DomiError as error:
                log.warning("cannot read when %r last ran: %s", schedule.name, error)
                runs = []
            self._last[key] = next(
                (run.fired_at for run in runs if run.trigger is trigger and run.fired_at), None
            )
        return self._last[key]
