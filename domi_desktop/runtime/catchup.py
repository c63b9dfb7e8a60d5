"""The runtime's share of a wake: which fires are busy, the claims of the whole wake written by
the recorder in one transaction, and the results of runs written in batches that survive a full
disk or a locked database.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from domi_desktop.actions import warden
from domi_desktop.events import Event, FireEvent, LateFire, RunFinished, StoreProblem
from domi_desktop.model import WARDEN_STOPPED, FireClaim, Overlap, RunStatus, Schedule, SkipReason
from domi_desktop.ports import Clock
from domi_desktop.runtime.lanes import Admission, admission
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.scheduler.decide import GRACE, MAX_LISTED_SKIPS, FireDecision
from domi_desktop.store import Store
from domi_desktop.store.claims import Finish, Start
from domi_desktop.store.writer import Writer

log = logging.getLogger(__name__)

PRUNE_INTERVAL = 600.0
"""Seconds between two retention passes of the worker (after a wake, never inside a claim)."""

T = TypeVar("T")

SUPERSEDED_RESULT = "run %s: superseded: its result is not recorded (the run had already ended)"
"""Its run was no longer ``running``: taken over by another machine while this one stood still."""

EXCLUSIVE = (Overlap.skip, Overlap.queue)
"""On a shared store, these skip a fire while another machine runs the schedule: a queue cannot
wait for a job on another machine, so there it skips as ``skip`` does."""


@dataclass(frozen=True, slots=True)
class Pending:
    """One fire of a wake, decided on the loop: its schedule, and busy or not by the lanes."""

    decision: FireDecision
    schedule: Schedule
    reason: SkipReason | None
    queued: bool
    """It waits for its lane's running job (``overlap`` queue)."""
    start_now: bool
    """Its run starts as soon as it is claimed (recorded by the worker with the claim)."""
    hold: str | None = None
    """It waits for its conditions (a ``waiting`` row, this its reason)."""
    note: str | None = None
    """The words recorded on its row instead of ``reason`` (what the conditions' gate said)."""


@dataclass(frozen=True, slots=True)
class WakeWrite:
    run_ids: tuple[int | None, ...]
    """Per pending fire, its run's id, or None when another process (or an edit) came first."""
    started: frozenset[int]
    pending: tuple[Pending, ...]
    """The wake's fires as claimed: one another machine was found running is now a ``busy``
    skip (``FireClaim.exclusive``)."""
    rows: int
    seconds: float
    """Rows inserted and the worker's time writing them (the transactions, not the listing)."""
    at: datetime
    """When the runs that start at once were started (their leases count from then)."""
    listing: float = 0.0
    """The worker's time listing the skipped instants, before the write."""

    def leased_at(self, run_id: int, now: datetime, lease: timedelta) -> datetime | None:
        """When the run's start and lease were written, if it was started with its claim and
        may still be launched as it is; else None: a loop that stood still for most of a lease
        since (a frozen app) writes the start again, and launches none that another machine took
        over meanwhile."""
        held = run_id in self.started and now < warden.trusted_until(self.at, lease)
        return self.at if held else None


class FutureLanes:
    """What the lanes will look like once the earlier fires of this wake are launched."""

    def __init__(self, lanes: dict[str, Any]) -> None:
        self._lanes = lanes
        self._running: set[str] = set()
        self._waiting: set[str] = set()

    def busy(self, key: str) -> tuple[bool, bool]:
        lane = self._lanes.get(key)
        running = bool(lane is not None and lane.busy) or key in self._running
        waiting = (lane is not None and lane.waiting is not None) or key in self._waiting
        return running, waiting

    def take(self, key: str, queued: bool) -> None:
        (self._waiting if queued else self._running).add(key)


def plan_claims(
    decisions: Sequence[FireDecision],
    schedule_of: Callable[[int], Schedule],
    future: FutureLanes,
    key_of: Callable[[Schedule], str],
) -> list[Pending]:
    """Busy or not, per fire, in order: a fire sees the ones before it in the same wake (those
    of earlier calls with the same ``future``)."""
    pending: list[Pending] = []
    for decision in decisions:
        schedule = schedule_of(decision.schedule_id)
        key = key_of(schedule)
        running, waiting = future.busy(key)
        reason, queued = decision.skip_reason, False
        if reason is None:
            admitted = admission(schedule.policies.overlap, running, waiting, may_queue=True)
            if admitted is Admission.busy:
                reason = SkipReason.busy
            else:
                queued = admitted is Admission.queue
                future.take(key, queued)
        start_now = reason is None and not queued and decision.delay.total_seconds() <= 0
        pending.append(Pending(decision, schedule, reason, queued, start_now))
    return pending


def write_wake(pending: Sequence[Pending], clock: Clock, store: Store, writer: Writer) -> WakeWrite:
    """On the worker: every claim of the wake in one transaction, the runs that start at once in
    a second. The skipped instants are listed here too (cron work, kept off the loop), before the
    transaction begins, so that it is held no longer than the writing."""
    listed = time.perf_counter()
    claims = [
        FireClaim(
            each.decision.schedule_id,
            expected_last_due=each.decision.expected_last_due,
            due=each.decision.due,
            fired_at=each.decision.fired_at,
            trigger=each.decision.trigger,
            late=each.decision.late,
            missed_count=each.decision.missed_count,
            skipped=each.decision.skipped()[-MAX_LISTED_SKIPS:],
            status=(
                RunStatus.waiting
                if each.hold is not None
                else RunStatus.running
                if each.reason is None
                else RunStatus.skipped
            ),
            reason=each.hold or each.note or each.reason,
            exclusive=store.shared and each.schedule.policies.overlap in EXCLUSIVE,
        )
        for each in pending
    ]
    began = time.perf_counter()
    run_ids, busy = writer.claim(claims)
    pending = [
        replace(each, reason=SkipReason.busy, queued=False, start_now=False)
        if run_id in busy
        else each
        for each, run_id in zip(pending, run_ids, strict=True)
    ]
    now = clock.now()
    starts = [
        Start(run_id, now, str(store.log_path_for(run_id)), late=now - each.decision.due > GRACE)
        for each, run_id in zip(pending, run_ids, strict=True)
        if run_id is not None and each.start_now
    ]
    started = writer.start(starts) if starts else []
    rows = sum(
        len(claim.skipped) + 1 for claim, run_id in zip(claims, run_ids, strict=True) if run_id
    )
    return WakeWrite(
        tuple(run_ids),
        frozenset(start.run_id for start, ok in zip(starts, started, strict=True) if ok),
        tuple(pending),
        rows,
        time.perf_counter() - began,
        now,
        began - listed,
    )


class Pruner:
    """Retention after a wake, at most once per ``PRUNE_INTERVAL``, on the recorder: its reads on
    the readers' connection, its deletes on the recorder's own, so a lock another process holds
    is waited for there, never in front of a window's read."""

    def __init__(self, store: Store, clock: Clock, recorder: Recorder) -> None:
        self._store = store
        self._clock = clock
        self._recorder = recorder
        self._at: float | None = None

    def maybe(self) -> None:
        now = self._clock.monotonic()
        if self._at is not None and now - self._at < PRUNE_INTERVAL:
            return
        self._at = now
        self._recorder.submit(partial(self._prune, self._clock.now()), self._pruned)

    def _prune(self, now: datetime, writer: Writer) -> int:
        doomed = self._store.doomed_runs(now)
        deleted = writer.delete_runs(sorted(doomed))
        self._store.remove_logs([path for path in doomed.values() if path])
        return deleted

    @staticmethod
    def _pruned(outcome: int | Exception) -> None:
        if isinstance(outcome, Exception):
            log.warning("pruning old runs failed: %s", outcome)
        elif outcome:
            log.info("pruned %s old runs", outcome)


def decided_late(pending: Sequence[Pending]) -> tuple[LateFire, ...]:
    """The fires of a wake that will run late (not skipped, not waiting for a condition)."""
    return tuple(
        LateFire(
            each.schedule.id, each.schedule.name, each.schedule.tz, each.decision.due,
            each.decision.fired_at, each.decision.missed_count,
        )
        for each in pending
        if each.decision.late and each.reason is None and each.hold is None
    )  # fmt: skip


def fire_event(
    decision: FireDecision, schedule: Schedule, run_id: int, reason: SkipReason | None
) -> FireEvent:
    return FireEvent(
        schedule_id=decision.schedule_id,
        run_id=run_id,
        name=schedule.name,
        tz=schedule.tz,
        due=decision.due,
        fired_at=decision.fired_at,
        trigger=decision.trigger,
        late=decision.late,
        missed_count=decision.missed_count,
        skipped=reason,
    )


def for_each(items: Sequence[T], each: Callable[[T], None]) -> None:
    """``each`` of ``items`` in order: one that fails is logged, and the rest go on."""
    for item in items:
        try:
            each(item)
        except Exception:  # one bad item must not stall the rest of the wake
            log.exception("handling %r failed", item)


def warden_stopped(finish: Finish) -> bool:
    return finish.status is RunStatus.interrupted and WARDEN_STOPPED in (finish.reason or "")


class Results:
    """Run results on their way to the database: written in batches by the recorder, which keeps
    a batch the database cannot take (a full disk, another process's lock) and tries it again;
    the user hears of it once (``StoreProblem``)."""

    def __init__(
        self,
        recorder: Recorder,
        store: Store,
        emit: Callable[[Event], None],
        read_ahead: Callable[[Sequence[RunFinished]], None] | None = None,
        rerun: Callable[[int, int], None] | None = None,
    ) -> None:
        """``read_ahead`` gets each written batch's events before they are emitted one by one:
        what they will all need, read at once. ``rerun(schedule, run)`` runs once more a run the
        warden stopped that no other machine took over (its result was written: it was still
        this machine's)."""
        self._recorder = recorder
        self._rerun = rerun
        self._read_ahead = read_ahead
        self._store = store
        self._emit = emit
        self._queue: list[tuple[Finish, RunFinished | None]] = []
        self._writing = 0
        self.troubled: str | None = None
        """Why writes do not go through, while they do not."""
        self.stopping = False

    @property
    def unwritten(self) -> int:
        return len(self._queue) + self._writing

    def add(self, finish: Finish, event: RunFinished | None) -> None:
        if self.stopping:
            # The loop will not run the recorder's answers: the job did end, say so now.
            self._recorder.submit(lambda writer: writer.finish([finish]))
            if event is not None:
                self._emit(event)
            return
        self._queue.append((finish, event))
        self.flush()

    def flush(self) -> None:
        if self._writing or not self._queue:
            return
        batch, self._queue = self._queue, []
        self._writing = len(batch)
        finishes = [finish for finish, _ in batch]
        self._recorder.submit(
            lambda writer: writer.finish(finishes), lambda o: self._wrote(batch, o)
        )

    def problem(self, error: Exception) -> None:
        if self.troubled is not None:
            return
        self.troubled = str(error)
        self._emit(StoreProblem(self.troubled, self.unwritten))

    def trouble(self, error: Exception | None) -> None:
        """The recorder's word: writes are held up (``error``), or go through again (None)."""
        if error is not None:
            self.problem(error)
        elif self.troubled is not None:
            log.info("the database takes writes again")
            self.troubled = None

    def _wrote(
        self, batch: list[tuple[Finish, RunFinished | None]], outcome: list[bool] | Exception
    ) -> None:
        self._writing = 0
        events = [event for _, event in batch if event is not None]
        if isinstance(outcome, Exception):
            # Not a passing trouble (the recorder tries those again): this database cannot take
            # them. The jobs did end all the same; only their record is gone.
            runs = ", ".join(str(finish.run_id) for finish, _ in batch)
            log.error("the results of runs %s are lost: %s", runs, outcome)
            self.problem(outcome)
        else:
            for (finish, event), written in zip(batch, outcome, strict=True):
                if not written:
                    log.warning(SUPERSEDED_RESULT, finish.run_id)
                elif event is not None and self._rerun is not None and warden_stopped(finish):
                    self._rerun(event.schedule_id, finish.run_id)
        if self._read_ahead is not None:
            try:
                self._read_ahead(events)
            except Exception:  # the events go out all the same; each reads what it needs
                log.exception("reading ahead for %s results failed", len(events))
        for_each(events, self._emit)
        self.flush()
