"""Session triggers carried out: at login, at unlock, on resume and before sleep, each
schedule that asks for the moment runs once, within its overlap policy, at most once per its
``min_interval``; the run is recorded with the moment as its trigger. The decisions are
``scheduler.session``'s; the runs are started as a Run now is (``ManualRuns``).

The schedule's conditions gate the moment as they gate a due at that instant: it runs, waits
(``waiting``, re-gated at each wake and change until its ``wait_at_most``) or is skipped, with the
gate's words on its row. Before sleep nothing can wait (the machine is going): a run that would
wait is recorded skipped, saying what it lacked."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from domi_desktop.errors import DomiError
from domi_desktop.events import RunWaiting
from domi_desktop.model import RunStatus, Schedule, SkipReason, Trigger
from domi_desktop.runtime.gates import ConditionKeeper, Held
from domi_desktop.runtime.lanes import manual_event
from domi_desktop.runtime.manual import ManualHost, ManualRuns
from domi_desktop.scheduler.conditions import Gate, Verdict
from domi_desktop.scheduler.session import allowed, wants

log = logging.getLogger(__name__)

HISTORY = 200
"""Runs of a schedule read back for when a trigger last fired it (once per schedule and trigger)."""


class SessionHost(ManualHost, Protocol):
    """What session runs need of the runtime (``engine.Runtime``)."""

    keeper: ConditionKeeper

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
        """Every schedule that asks for ``trigger`` runs now, or waits or is skipped by its
        conditions; returns how many were fired. ``on_recorded`` is called once each of them is
        on record (or could not be)."""
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
            verdict = self._rt.keeper.gate_now(schedule, now)
            if verdict is None or verdict.verdict in (Verdict.run, Verdict.run_anyway):
                self._manual.run(schedule.id, trigger, None, self._noted(verdict, recorded))
            else:
                self._held_back(schedule, trigger, verdict, recorded)
            count += 1
        return count

    def _noted(
        self, verdict: Gate | None, then: Callable[[int | Exception], None]
    ) -> Callable[[int | Exception], None]:
        """The gate's words ("ran anyway...", a metered allowance) kept for the run's row."""
        note = None if verdict is None else verdict.reason

        def recorded(outcome: int | Exception) -> None:
            if note is not None and not isinstance(outcome, Exception):
                self._rt.keeper.noted(outcome, note)
            then(outcome)

        return recorded

    def _held_back(
        self,
        schedule: Schedule,
        trigger: Trigger,
        verdict: Gate,
        then: Callable[[int | Exception], None],
    ) -> None:
        """Recorded ``waiting`` for what it lacks, or ``skipped`` with why."""
        now = self._rt.clock.now()
        reason = verdict.reason or "its conditions are not met"
        waits = verdict.verdict is Verdict.wait and trigger is not Trigger.before_sleep
        if verdict.verdict is Verdict.wait and not waits:
            reason = f"not run before sleep, which cannot wait: {reason}"
        status = RunStatus.waiting if waits else RunStatus.skipped
        if waits and any(h.schedule_id == schedule.id for h in self._rt.keeper.held.values()):
            # The run that waits already will run when all is there: a second would replace it
            # and record it skipped, for the same one run in the end.
            then(DomiError(f"{schedule.name} is already waiting: {reason}"))
            return

        def recorded(outcome: int | Exception) -> None:
            if isinstance(outcome, int):
                if waits:
                    self._rt.keeper.hold_session(
                        Held(outcome, schedule.id, None, now, trigger, reason)
                    )
                    self._rt.emit(RunWaiting(outcome, schedule.id, schedule.name, None, reason))
                else:
                    event = manual_event(schedule, outcome, trigger, now)
                    self._rt.emit(replace(event, skipped=SkipReason.conditions))
                    # A skip is no run: the interval counts from the last run that was.
                    outcome = DomiError(reason)
            then(outcome)

        self._rt.recorder.submit(
            lambda writer: writer.record_manual(
                schedule.id, now, trigger, status=status, reason=reason
            ),
            recorded,
        )

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
        live = self._rt.lanes.run_ids()
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
                (
                    run.fired_at for run in runs
                    if run.trigger is trigger and run.fired_at
                    and run.status is not RunStatus.skipped
                ),
                None,
            )  # fmt: skip
        return self._last[key]
