"""Runs gated by the machine's state, waiting runs re-gated at each wake, jobs stopped when a
condition goes away, sleep held off while a job runs, catch-up bursts admitted a few at a time
(alerts: ``alerts.py``; windows: ``windows.py``; the user's return: ``away.py``). The decisions
are the pure ones of ``scheduler``; this module keeps their state and carries them out through
the ``Runtime`` that owns it, on the loop thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from domi_desktop.errors import DomiError
from domi_desktop.events import Event, FireEvent, RunFinished
from domi_desktop.model import (
    Action,
    Conditions,
    Run,
    RunStatus,
    Schedule,
    SkipReason,
    SystemState,
    Trigger,
    WakeReason,
)
from domi_desktop.ports import Clock, ConditionSource, InhibitorHandle, Loop, SleepInhibitor
from domi_desktop.runtime.alerts import NOTE_END, AlertKeeper
from domi_desktop.runtime.away import AwayKeeper
from domi_desktop.runtime.catchup import Pending
from domi_desktop.runtime.resources import ResourceWants, job_action
from domi_desktop.runtime.windows import WindowKeeper
from domi_desktop.scheduler.conditions import (
    RECHECK,
    Gate,
    Verdict,
    format_span,
    gate,
    lost,
)
from domi_desktop.scheduler.decide import GRACE, WakePlan
from domi_desktop.scheduler.driver import Driver
from domi_desktop.store import Store


class KeeperHost(Protocol):
    """What the keeper needs of the runtime that owns it (``engine.Runtime``)."""

    clock: Clock
    loop: Loop
    store: Store
    driver: Driver

    def emit(self, event: Event) -> None: ...

    def known_schedules(self) -> dict[int, Schedule]: ...

    def lane_free(self, schedule: Schedule) -> bool: ...

    def launch_held(
        self, run_id: int, schedule: Schedule, trigger: Trigger, now: datetime, log_path: Path
    ) -> None: ...

    def stop_run(self, run_id: int, reason: str = ...) -> bool: ...

    def pause_run(self, run_id: int, paused: bool) -> bool: ...

    def schedule_changed(self, schedule_id: int) -> None: ...


log = logging.getLogger(__name__)


_WAITING_FOR = "waiting for "
DISABLED_WHILE_WAITING = "the schedule was turned off while it waited"


@dataclass
class Held:
    """A run in the ``waiting`` state, as the runtime remembers it."""

    run_id: int
    schedule_id: int
    due: datetime | None
    since: datetime
    trigger: Trigger
    reason: str


@dataclass
class _Watched:
    schedule: Schedule
    at_start: SystemState


class ConditionKeeper:
    def __init__(
        self,
        runtime: KeeperHost,
        source: ConditionSource | None,
        inhibitor: SleepInhibitor | None,
        *,
        alerts: AlertKeeper,
        on_wake: Callable[[WakePlan, WakeReason], None] | None = None,
    ) -> None:
        self._rt = runtime
        self._source = source
        self._wants = ResourceWants(source)
        self._inhibitor = inhibitor
        self.alerts = alerts
        self.held: dict[int, Held] = {}
        self._watched: dict[int, _Watched] = {}
        self._lost: dict[int, str] = {}
        self._awake: dict[int, InhibitorHandle] = {}
        self._listening = False
        self._notes: dict[int, str] = {}
        self._read: tuple[float, SystemState] | None = None
        self._on_wake = on_wake
        self.windows = WindowKeeper()
        self.away = AwayKeeper(runtime, lambda: self.state(fresh=True))

    # -- the machine's state ---------------------------------------------------------------------

    def state(self, *, fresh: bool = False) -> SystemState:
        """The OS's word, read at most once a second (unless ``fresh``): a wake of many fires
        asks once."""
        if self._source is None:
            return SystemState()
        now = self._rt.clock.monotonic()
        if self._read is None or fresh or now - self._read[0] >= 1.0:
            self._read = (now, self._source.current())
        return self._read[1]

    def _gate(self, schedule: Schedule, due: datetime, now: datetime) -> Gate:
        conditions = schedule.policies.conditions
        if conditions.window is not None:
            last = self.alerts.last_success(schedule.id)
            return self.windows.gate(schedule, self.state(), due, now, last)
        return gate(
            conditions,
            schedule.action.kind,
            self.state(),
            due,
            now,
            self.alerts.last_success(schedule.id),
        )

    # -- at claim ------------------------------------------------------------------------------

    def watch_for(self, schedules: Sequence[Schedule]) -> None:
        """A wake's fires are of ``schedules``: what their gates read is watched from now on."""
        if self._wants.tell([*self._needing(), *schedules]):
            self._read = None

    def apply_gates(self, pending: list[Pending]) -> list[Pending]:
        """Each fire that would run is gated: it runs, waits (a ``waiting`` row) or is skipped
        (its schedule told to ``watch_for`` first)."""
        gated: list[Pending] = []
        for each in pending:
            schedule = each.schedule
            if each.reason is not None or not _has_conditions(schedule):
                gated.append(each)
                continue
            verdict = self._gate(schedule, each.decision.due, each.decision.fired_at)
            text = verdict.reason
            if verdict.verdict is Verdict.wait:
                gated.append(replace(each, hold=text, queued=False, start_now=False))
            elif verdict.verdict is Verdict.skip:
                gated.append(
                    replace(each, reason=SkipReason.conditions, note=text, start_now=False)
                )
            else:
                gated.append(each if text is None else replace(each, note=text))
        return gated

    def noted(self, run_id: int, note: str) -> None:
        """What the gate said of a run that started: kept on its row when it ends."""
        self._notes[run_id] = note

    def reason(self, run_id: int, reason: str | None) -> str | None:
        """The reason a run ends with: the gate's words first, then the job's."""
        note = self.away.with_pauses(run_id, self._notes.pop(run_id, None))
        if note is None:
            return reason
        return note if reason is None else f"{note}{NOTE_END}{reason}"

    def hold(self, run_id: int, each: Pending) -> None:
        decision = each.decision
        self._wait(
            Held(
                run_id,
                decision.schedule_id,
                decision.due,
                decision.fired_at,
                decision.trigger,
                each.hold or "",
            )
        )
        log.info("run %s of schedule %s: %s", run_id, decision.schedule_id, each.hold)
        self._listen()

    def gate_now(self, schedule: Schedule, now: datetime) -> Gate | None:
        """A run outside the calendar (a session trigger's) gated as a due at ``now``; None
        for a schedule without conditions."""
        if not _has_conditions(schedule):
            return None
        if self._wants.tell([*self._needing(), schedule]):
            self._read = None
        return self._gate(schedule, now, now)

    def hold_session(self, held: Held) -> None:
        """A session trigger's run waits as a due's does; a wake soon re-plans the driver's
        next one around it (its deadline), which a session moment did not."""
        self._wait(held)
        log.info("run %s of schedule %s: %s", held.run_id, held.schedule_id, held.reason)
        self._listen()
        self._rt.loop.call_soon(self._condition_wake)

    def load(self, runs: list[Run]) -> None:
        """The waiting rows left by an earlier process: they wait here now."""
        for run in sorted(runs, key=lambda r: r.id):
            since = run.fired_at or run.due or self._rt.clock.now()
            self._wait(Held(run.id, run.schedule_id, run.due, since, run.trigger, run.reason or ""))
        self._listen()

    def _wait(self, newer: Held) -> None:
        """At most one run of a schedule waits, the latest due's: "rather too few than too
        many". The one it replaces is recorded skipped, as a catch-up records missed dues; one
        with a window waits on beside it (each due serves a stretch of its own)."""
        known = self._rt.known_schedules().get(newer.schedule_id)
        for older in [h for h in self.held.values() if h.schedule_id == newer.schedule_id]:
            if known is not None and self.windows.waits_beside(known, older.due):
                continue
            del self.held[older.run_id]
            waited_for = older.reason.removeprefix(_WAITING_FOR)
            reason = f"still waiting for {waited_for} when a later due came: that one waits now"
            schedule = self._rt.known_schedules().get(older.schedule_id)
            try:
                if self._rt.store.skip_waiting(older.run_id, self._rt.clock.now(), reason):
                    self._rt.emit(
                        RunFinished(
                            older.run_id, older.schedule_id,
                            schedule.name if schedule is not None else "", RunStatus.skipped,
                            reason, None, timedelta(0),
                        )
                    )  # fmt: skip
            except DomiError as error:
                log.error("waiting run %s could not be skipped: %s", older.run_id, error)
        self.held[newer.run_id] = newer

    # -- at each wake --------------------------------------------------------------------------

    def held_until(self, now: datetime) -> datetime | None:
        """The driver's next wake at the latest, while runs wait: a minute, or sooner when time
        alone changes a verdict."""
        if not self.held:
            return None
        soonest = now + RECHECK
        for held in self.held.values():
            schedule = self._rt.known_schedules().get(held.schedule_id)
            if schedule is None:
                continue
            until = self._gate(schedule, held.due or held.since, now).until
            if until is not None and until < soonest:
                soonest = until
        return soonest

    def woke(self, plan: WakePlan, reason: WakeReason) -> None:
        """The driver's wake: waiting runs re-gated, staleness looked at, then the app's hook."""
        self.regate()
        self.alerts.tick(plan.now)
        if self._on_wake is not None:
            self._on_wake(plan, reason)

    def regate(self) -> None:
        """Each waiting run again: it starts, is skipped, or goes on waiting."""
        if not self.held:
            return
        now = self._rt.clock.now()
        for held in sorted(self.held.values(), key=lambda h: h.run_id):
            schedule = self._rt.known_schedules().get(held.schedule_id)
            if schedule is None:
                self.held.pop(held.run_id, None)
                continue
            if not schedule.enabled:
                # Turned off while it waited: given up now, in words of its own (a wait that
                # ran out is what the windows tell as "did not run").
                self.held.pop(held.run_id, None)
                self._give_up(held, schedule, DISABLED_WHILE_WAITING, now)
                continue
            due = held.due or held.since
            verdict = self._gate(schedule, due, now)
            if verdict.verdict is Verdict.wait:
                continue
            if not self._rt.lane_free(schedule):
                continue
            self.held.pop(held.run_id, None)
            try:
                self._release_held(held, schedule, verdict, due, now)
            except DomiError as error:
                log.error("waiting run %s could not go on: %s", held.run_id, error)
        self._listen()

    def _release_held(
        self, held: Held, schedule: Schedule, verdict: Gate, due: datetime, now: datetime
    ) -> None:
        waited_for = held.reason.removeprefix(_WAITING_FOR)
        if verdict.verdict is Verdict.skip:
            self._give_up(held, schedule, verdict.reason or "skipped", now)
            return
        if verdict.verdict is Verdict.run_anyway:
            reason = verdict.reason or "ran anyway"
            self.away.at_deadline(held.run_id)
        else:
            reason = f"started after waiting {format_span(_whole(now - due))} for {waited_for}"
            if verdict.reason is not None:
                reason += f"; {verdict.reason}"
        log_path = self._rt.store.log_path_for(held.run_id)
        late = now - due > GRACE
        if self._rt.store.start_waiting(held.run_id, now, log_path, late=late, reason=reason):
            if reason is not None:
                self._notes[held.run_id] = reason
            log.info("run %s of %r: %s", held.run_id, schedule.name, reason)
            self._rt.launch_held(held.run_id, schedule, held.trigger, now, log_path)
            # Its start, told as a fire's: the windows show it running at once.
            self._rt.emit(
                FireEvent(
                    schedule.id, held.run_id, schedule.name, schedule.tz, held.due, now,
                    held.trigger, late=late,
                )
            )  # fmt: skip

    def _give_up(self, held: Held, schedule: Schedule, reason: str, now: datetime) -> None:
        if self._rt.store.skip_waiting(held.run_id, now, reason):
            self._rt.emit(
                RunFinished(
                    held.run_id, schedule.id, schedule.name, RunStatus.skipped, reason, None,
                    timedelta(0),
                )
            )  # fmt: skip

    # -- a job's life --------------------------------------------------------------------------

    def started(self, run_id: int, schedule: Schedule) -> None:
        conditions = schedule.policies.conditions
        if conditions.keep_awake and self._inhibitor is not None and run_id not in self._awake:
            self._awake[run_id] = self._inhibitor.acquire(f"{schedule.name} is running")
        if self.away.started(run_id, schedule):
            self._listen()
        if conditions.stop_if_lost and run_id not in self._watched:
            self._watched[run_id] = _Watched(schedule, self.state())
            self._listen()

    def ended(self, run_id: int) -> None:
        """The job ``run_id`` is over: what it held is let go."""
        handle = self._awake.pop(run_id, None)
        if handle is not None:
            handle.release()
        watched = self._watched.pop(run_id, None)
        reason = self._lost.pop(run_id, None)
        came_back = self.away.ended(run_id)
        if watched is not None and reason is not None:
            self._wait_again(run_id, watched.schedule)
        elif came_back is not None:
            self._wait_again(run_id, came_back)
        self._listen()

    def _wait_again(self, run_id: int, schedule: Schedule) -> None:
        now = self._rt.clock.now()
        try:
            due = self._rt.store.get_run(run_id).due
            verdict = self._gate(schedule, due or now, now)
            reason = verdict.reason or f"{_WAITING_FOR}its conditions"
            new_id = self._rt.store.record_waiting_run(schedule.id, due, now, reason, run_id)
        except DomiError as error:
            log.error("run %s was stopped and cannot wait to run again: %s", run_id, error)
            return
        self.held[new_id] = Held(new_id, schedule.id, due, now, Trigger.resumed, reason)
        log.info("run %s will run again as run %s: %s", run_id, new_id, reason)
        self._rt.loop.call_soon(self._condition_wake)

    def _condition_wake(self) -> None:
        self._rt.driver.wake(WakeReason.condition)

    def changed(self) -> None:
        """The OS said the network or the power changed."""
        self._read = None
        if not (self._watched or self.held):
            # Told after the source stopped listening (its last signals were still queued):
            # nothing waits or is watched, and a read now would open a new bus connection
            # right behind the one just closed (the app hung there, in QtDBus's connect).
            return
        state = self.state()
        for run_id, watched in list(self._watched.items()):
            schedule = watched.schedule
            why = lost(
                schedule.policies.conditions, schedule.action.kind, state, at_start=watched.at_start
            )
            if why is not None and run_id not in self._lost:
                self._lost[run_id] = why
                log.info("run %s of %r: %s", run_id, schedule.name, why)
                self._rt.stop_run(run_id, why)
        if self.held:
            self._rt.driver.wake(WakeReason.condition)

    def _needing(self) -> list[Schedule]:
        """The schedules whose runs wait or are watched: what the source must watch for."""
        known = self._rt.known_schedules()
        held = [known[h.schedule_id] for h in self.held.values() if h.schedule_id in known]
        watched = [watched.schedule for watched in self._watched.values()]
        return held + watched + self.away.schedules()

    def action_for(self, schedule: Schedule) -> Action:
        """The action as its job starts now (``DOMI_VOLUME_PATH`` for its disk): a manual run
        too, which waited for nothing, so its disk is looked for now."""
        if self._wants.tell([*self._needing(), schedule]):
            self._read = None
        return job_action(schedule, self.state())

    def _listen(self) -> None:
        if self._source is None:
            return
        if self._wants.tell(self._needing()):
            self._read = None
        needed = bool(self.held or self._watched or self.away.schedules())
        if needed and not self._listening:
            self._listening = True
            if not self._source.start(lambda: self._rt.loop.call_soon(self.changed)):
                log.info("no condition signals (%s); checked every minute", self._source.status)
        elif not needed and self._listening:
            self._listening = False
            self._source.stop()

    def close(self) -> None:
        self.away.close()
        for handle in self._awake.values():
            handle.release()
        self._awake.clear()
        if self._listening and self._source is not None:
            self._source.stop()
        self._listening = False

    @property
    def inhibiting(self) -> frozenset[int]:
        return frozenset(self._awake)


def _has_conditions(schedule: Schedule) -> bool:
    return schedule.policies.conditions != Conditions() or schedule.action.kind == "http"


def _whole(span: timedelta) -> timedelta:
    return timedelta(seconds=max(0, int(span.total_seconds())))
