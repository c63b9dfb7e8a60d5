"""The runtime's alerts: results folded into each schedule's alert state, the notices
they make, a schedule paused when they say so, and the staleness watchdog at each wake.

The decisions are the pure ones of ``scheduler.alerts``; this module keeps their state (rebuilt
from the database the first time a schedule is seen) and carries them out, on the loop thread.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from domi_desktop.errors import DomiError
from domi_desktop.events import AlertEvent, Event, RunFinished
from domi_desktop.model import Alerts, RunStatus, Schedule
from domi_desktop.ports import Clock
from domi_desktop.scheduler import alerts as alerting
from domi_desktop.store import Store

log = logging.getLogger(__name__)

NOTE_END = "; then "
"""Between the gate's words on a run (how long it waited, why it ran anyway) and the job's."""


def failure_of(reason: str | None) -> str | None:
    """What an alert compares of a failed run: the job's failure, never the gate's note before
    it (a wait of another length is not another error)."""
    if reason is None:
        return None
    return reason.rpartition(NOTE_END)[2]


class AlertHost(Protocol):
    """What the alerts need of the runtime that owns them (``engine.Runtime``)."""

    clock: Clock
    store: Store

    def known_schedules(self) -> dict[int, Schedule]: ...

    def schedule_changed(self, schedule_id: int) -> None: ...

    def emit(self, event: Event) -> None: ...


class AlertKeeper:
    def __init__(self, runtime: AlertHost, default_alerts: Alerts) -> None:
        self._rt = runtime
        self.default_alerts = default_alerts
        self._successes: dict[int, datetime] | None = None
        self._alerts: dict[int, alerting.AlertState] = {}

    def last_success(self, schedule_id: int) -> datetime | None:
        if self._successes is None:
            self._successes = self._rt.store.last_successes()
        return self._successes.get(schedule_id)

    def tick(self, now: datetime) -> None:
        """The staleness watchdog of every schedule that has one."""
        for schedule in list(self._rt.known_schedules().values()):
            alerts = self.alerts_of(schedule)
            if alerts.stale_after is None or not schedule.enabled:
                continue
            since = self.last_success(schedule.id) or schedule.created_at
            state = self._alert_state(schedule.id, None)
            state, notices = alerting.on_tick(state, now, since, alerts)
            self._alerts[schedule.id] = state
            for notice in notices:
                self._rt.emit(_alert_event(schedule, notice, None))

    def alerts_of(self, schedule: Schedule) -> Alerts:
        return schedule.policies.alerts or self.default_alerts

    def observe(self, event: Event) -> list[Event]:
        """A recorded result: the alerts it makes, and the schedule paused when they say so."""
        if not isinstance(event, RunFinished):
            return []
        now = self._rt.clock.now()
        if event.status is RunStatus.succeeded and self._successes is not None:
            self._successes[event.schedule_id] = now
        schedule = self._rt.known_schedules().get(event.schedule_id)
        outcome = alerting.Outcome.of(event.status, failure_of(event.reason))
        if schedule is None or outcome is None:
            return []
        alerts = self.alerts_of(schedule)
        state = self._alert_state(schedule.id, event.run_id)
        state, notices, pause = alerting.on_result(state, outcome, now, alerts)
        self._alerts[schedule.id] = state
        if pause:
            self._pause(schedule, f"paused after {state.consecutive_failures} failures in a row")
        return [
            replace(_alert_event(schedule, notice, event.run_id), reason=event.reason)
            for notice in notices
        ]

    def _pause(self, schedule: Schedule, why: str) -> None:
        """Alerts said so: the schedule is disabled (the user turns it back on)."""
        log.warning("schedule %s %r: %s", schedule.id, schedule.name, why)
        try:
            self._rt.store.set_enabled(schedule.id, False, self._rt.clock.now())
        except DomiError as error:
            log.error("schedule %s could not be paused: %s", schedule.id, error)
            return
        self._rt.schedule_changed(schedule.id)

    def read_alert_states(self, events: Sequence[Event]) -> None:
        """Before ``observe`` goes through a batch of results: the alert states of their
        schedules not known yet, in one query (one per schedule stood the GUI still after a
        wake)."""
        finished = [event for event in events if isinstance(event, RunFinished)]
        missing = {e.schedule_id for e in finished if e.schedule_id not in self._alerts}
        if missing:
            self._read_states(missing, besides={event.run_id for event in finished})

    def _alert_state(self, schedule_id: int, skip_run: int | None) -> alerting.AlertState:
        """Rebuilt the first time from the failures since the schedule's latest success (a
        success starts the state afresh; notices dropped), the run being observed left out."""
        if schedule_id not in self._alerts:
            self._read_states({schedule_id}, besides=() if skip_run is None else {skip_run})
        return self._alerts.get(schedule_id) or alerting.AlertState()

    def _read_states(self, schedule_ids: Collection[int], *, besides: Collection[int]) -> None:
        known = self._rt.known_schedules()
        wanted = [schedule_id for schedule_id in schedule_ids if schedule_id in known]
        try:
            failures = self._rt.store.failures_since_success(wanted, besides=besides)
        except DomiError:
            failures = {}
        for schedule_id in wanted:
            alerts = self.alerts_of(known[schedule_id])
            state = alerting.AlertState()
            for status, reason, finished_at in reversed(failures.get(schedule_id, [])):
                outcome = alerting.Outcome.of(status, failure_of(reason))
                state = alerting.on_result(state, outcome, finished_at, alerts).state
            self._alerts[schedule_id] = state


def _alert_event(
    schedule: Schedule, notice: alerting.AlertNotice, run_id: int | None
) -> AlertEvent:
    return AlertEvent(
        schedule_id=schedule.id,
        name=schedule.name,
        notice=notice.kind.value,
        failures=notice.failures,
        error=notice.error,
        stale_for=notice.stale_for,
        run_id=run_id,
    )
