"""A real week in a real store, for the Timeline's tests, its benchmark and the README's picture:
a laptop that slept two nights, was once without domi-desktop for an afternoon (and slept then,
as only the OS's journal knows), a catch-up after each, a run that waited for the charger and
runs that failed. Written through the store's own API, as the app writes it.

The week is Mon 2026-11-23 to Sun 2026-11-29 on Riga's clock; install that zone as ``local``
(``RIGA``) to see it as it was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from domi_desktop.cron import next_run, parse
from domi_desktop.model import CommandAction, FireClaim, RunStatus, Schedule, Trigger
from domi_desktop.store import Store, spans
from domi_desktop.story import Sleep, SpanSource

RIGA = ZoneInfo("Europe/Riga")
START = datetime(2026, 11, 23, tzinfo=RIGA)
END = START + timedelta(days=7)
NOW = datetime(2026, 11, 29, 22, 0, tzinfo=RIGA)

ASLEEP = (datetime(2026, 11, 24, 23, 10, tzinfo=RIGA), datetime(2026, 11, 26, 7, 2, tzinfo=RIGA))
QUIT = (datetime(2026, 11, 28, 11, 50, tzinfo=RIGA), datetime(2026, 11, 28, 18, 5, tzinfo=RIGA))
JOURNAL = Sleep(
    datetime(2026, 11, 28, 13, 0, tzinfo=RIGA), datetime(2026, 11, 28, 17, 30, tzinfo=RIGA)
)
GAP = (datetime(2026, 11, 27, 13, 0, tzinfo=RIGA), datetime(2026, 11, 27, 14, 30, tzinfo=RIGA))
CHARGER_WAIT = timedelta(minutes=42)


@dataclass
class Week:
    schedules: list[Schedule]
    runs: dict[str, int] = field(default_factory=dict)
    """Some runs by what they show: ``failed``, ``waited``, ``catch_up``, ``missed``."""


class _Writer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.last_due: dict[int, datetime | None] = {}

    def fire(
        self,
        schedule: Schedule,
        due: datetime,
        at: datetime,
        *,
        skipped: tuple[datetime, ...] = (),
        status: RunStatus = RunStatus.running,
        reason: str | None = None,
    ) -> int:
        late = at - due > timedelta(seconds=60)
        claim = FireClaim(
            schedule_id=schedule.id,
            expected_last_due=self.last_due.get(schedule.id, schedule.last_due),
            due=due,
            fired_at=at,
            trigger=Trigger.catch_up if late and status is RunStatus.running else Trigger.scheduled,
            late=late,
            missed_count=len(skipped),
            skipped=skipped,
            status=status,
            reason=reason,
        )
        run_id = self.store.claim_fire(claim)
        assert run_id is not None
        self.last_due[schedule.id] = due
        return run_id

    def run(
        self, run_id: int, start: datetime, took: timedelta, status: RunStatus, code: int
    ) -> None:
        self.store.start_run(run_id, start)
        reason = None if code == 0 else f"exit code {code}"
        if status is RunStatus.timed_out:
            reason = "timed out after 10 min"
        self.store.finish_run(
            run_id, status=status, finished_at=start + took, exit_code=code, reason=reason
        )


def _dues(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    expr, found, at = parse(schedule.expr), [], start - timedelta(microseconds=1)
    while (at := next_run(expr, at, RIGA)) is not None and at < end:  # type: ignore[assignment]
        found.append(at)
    return found


def _story(store: Store) -> None:
    machine = store.machine
    writer = store.writer()
    try:
        t = writer.transact
        t(lambda c: spans.started(c, machine, START - timedelta(hours=4)))
        t(lambda c: spans.beat(c, machine, ASLEEP[0]))
        t(lambda c: spans.falling_asleep(c, machine, ASLEEP[0]))
        t(lambda c: spans.woke(c, machine, ASLEEP[1], ASLEEP[0], SpanSource.signal))
        t(lambda c: spans.beat(c, machine, GAP[0]))
        t(lambda c: spans.woke(c, machine, GAP[1], GAP[0], SpanSource.gap))
        t(lambda c: spans.stopped(c, machine, QUIT[0]))
        t(lambda c: spans.started(c, machine, QUIT[1]))
        t(lambda c: spans.back_fill(c, machine, [JOURNAL], SpanSource.journal))
        t(lambda c: spans.beat(c, machine, NOW))
    finally:
        writer.close()


def _away(moment: datetime) -> datetime | None:
    """When the machine came back, if it was away (asleep, or without the app) at ``moment``."""
    for start, end in (ASLEEP, QUIT):
        if start <= moment < end:
            return end
    return None


def build_week(store: Store) -> Week:
    """The week's schedules, runs and machine story, written into ``store`` (empty)."""
    made = START - timedelta(days=1)
    action = CommandAction(argv=("true",))
    week = Week(
        [
            store.create_schedule("Nightly backup", "30 2 * * *", "Europe/Riga", action, now=made),
            store.create_schedule(
                "Rate-limit report", "0 9 * * 1-5", "Europe/Riga", action, now=made
            ),
            store.create_schedule("Sync notes", "0 */3 * * *", "Europe/Riga", action, now=made),
        ]
    )
    _story(store)
    w = _Writer(store)
    for schedule in week.schedules:
        missed: list[datetime] = []
        for due in _dues(schedule, START, NOW):
            if _away(due) is not None:
                missed.append(due)
                continue
            if missed:
                _catch_up(w, week, schedule, missed)
                missed = []
            _on_time(w, week, schedule, due)
        if missed:
            _catch_up(w, week, schedule, missed)
    return week


def _catch_up(w: _Writer, week: Week, schedule: Schedule, missed: list[datetime]) -> None:
    """The wake's one run of the latest missed due; the others recorded skipped with it."""
    *skipped, latest = missed
    woke = _away(latest)
    assert woke is not None
    at = woke + timedelta(minutes=1)
    run_id = w.fire(schedule, latest, at, skipped=tuple(skipped))
    w.run(run_id, at, timedelta(minutes=2), RunStatus.succeeded, 0)
    week.runs.setdefault("catch_up", run_id)


def _on_time(w: _Writer, week: Week, schedule: Schedule, due: datetime) -> None:
    if schedule.name == "Rate-limit report" and due.weekday() == 4:  # Friday: on battery
        run_id = w.fire(
            schedule, due, due, status=RunStatus.waiting, reason="waiting for the charger"
        )
        start = due + CHARGER_WAIT
        reason = "started after waiting 42 minutes for the charger"
        w.store.start_waiting(run_id, start, None, late=True, reason=reason)
        w.store.finish_run(
            run_id,
            status=RunStatus.succeeded,
            finished_at=start + timedelta(minutes=4),
            exit_code=0,
            reason=reason,  # the gate's words stay the run's (``ConditionKeeper.reason``)
        )
        week.runs["waited"] = run_id
        return
    run_id = w.fire(schedule, due, due)
    if schedule.name == "Rate-limit report" and due.weekday() == 3:  # Thursday: the API said no
        w.run(run_id, due, timedelta(seconds=40), RunStatus.failed, 3)
        week.runs["failed"] = run_id
    elif schedule.name == "Sync notes" and due.weekday() == 0 and due.hour == 21:
        w.run(run_id, due, timedelta(minutes=10), RunStatus.timed_out, -9)
    else:
        took = timedelta(minutes=3) if schedule.name == "Nightly backup" else timedelta(seconds=50)
        w.run(run_id, due, took, RunStatus.succeeded, 0)
