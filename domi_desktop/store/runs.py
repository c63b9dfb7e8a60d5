"""The run rows of ``Store``: claiming fires, starting and finishing runs, orphans, retention,
leases between machines and the runs waiting for their conditions (``Store`` inherits them)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from types import MappingProxyType

from peewee import IntegrityError

from domi_desktop.actions import identity
from domi_desktop.errors import StoreError
from domi_desktop.model import PROCESS_DIED, FireClaim, Run, RunStatus, Trigger
from domi_desktop.store import _open, _rows, claims, codec, leases, retention, waiting
from domi_desktop.store.core import StoreCore
from domi_desktop.store.models import RunRow
from domi_desktop.store.writer import Writer

_FAILED = (RunStatus.failed.value, RunStatus.timed_out.value)
_FAILURES = (
    "SELECT r.id, r.schedule_id, r.status, r.reason, r.finished_at FROM runs r"
    " WHERE r.schedule_id IN ({ids}) AND r.status IN ({p}, {p}) AND r.finished_at IS NOT NULL"
    " AND r.id > COALESCE((SELECT MAX(ok.id) FROM runs ok"
    " WHERE ok.schedule_id = r.schedule_id AND ok.status = {p}), 0)"
    " ORDER BY r.schedule_id, r.id DESC"
)
EMPTY: Mapping[int, str] = MappingProxyType({})


class RunStore(StoreCore):
    """The run methods of ``Store``."""

    def claim_fire(self, claim: FireClaim) -> int | None:
        """Claim the fire of ``due``: advance ``last_due`` and record the runs, all or nothing.

        In one ``BEGIN IMMEDIATE`` transaction: ``last_due`` moves to ``due`` only if it still
        equals ``expected_last_due`` (compare-and-set); then one ``skipped`` row per instant of
        ``skipped`` (reason ``skip_reason``, trigger scheduled) and the fire's own row are inserted;
        its ``status`` is ``running``, or ``skipped`` with a ``reason`` when a policy turns the fire
        into a skip (busy, paused, catch_up_window).
        Returns the fire row's id, or None when the compare failed: another process (or an edit)
        moved ``last_due`` first, and nothing was written. The caller caps ``skipped`` (100 rows)
        and passes the full count as ``missed_count``.
        """
        claims.check_claim(claim)
        with self._using(), claims.write_transaction(self._db) as cursor:
            (run_id,) = claims.write_claims(cursor, self._db.param, (claim,), self.holder)
            return run_id

    def writer(self) -> Writer:
        """The hot path (claims, starts, finishes in bulk) on a connection of its own, for one
        worker thread; the caller closes it."""
        with self._using():
            if self.target.url is not None:
                return Writer.postgresql(self.target.url, self.holder)
            return Writer.sqlite(self.path, self.holder)

    def record_manual_run(
        self,
        schedule_id: int,
        fired_at: datetime,
        trigger: Trigger = Trigger.manual,
        resumed_from: int | None = None,
    ) -> int:
        """Record a ``running`` run outside the schedule's calendar; ``last_due`` is untouched.

        With ``resumed_from`` (trigger ``resumed``) it re-runs an interrupted run; a run is resumed
        at most once, a second attempt raises ``StoreError``.
        """
        fired_us = codec.to_micros(fired_at)
        with self._using():
            with self._atomic():
                _rows.schedule_row(schedule_id)
                if resumed_from is not None:
                    _rows.run_row(resumed_from)
                    earlier = (
                        RunRow.select(RunRow.id).where(RunRow.resumed_from == resumed_from).first()
                    )
                    if earlier is not None:
                        raise StoreError(
                            f"run {resumed_from} was already resumed as run {earlier.id}"
                        )
                owner = _rows.owner_columns(self.machine, self.holder.lease_until(fired_at))
                row = _rows.new_run(
                    schedule_id,
                    RunStatus.running,
                    trigger,
                    owner,
                    fired_at=fired_us,
                    resumed_from=resumed_from,
                )
                try:
                    with self._db.atomic():  # a savepoint: the transaction survives a refusal
                        run_id = int(RunRow.insert(row).execute())
                except IntegrityError as exc:
                    # Another machine resumed it between the check above and this insert.
                    raise StoreError(f"run {resumed_from} was already resumed") from exc
            return run_id

    def start_run(
        self,
        run_id: int,
        started_at: datetime,
        log_path: str | os.PathLike[str] | None = None,
        attempt: int = 0,
    ) -> bool:
        """Record that the action started (``attempt`` counts retries from 0).

        False if the run is no longer ``running`` (another path ended it first): do not start it.
        """
        start = claims.Start(
            run_id, started_at, None if log_path is None else os.fspath(log_path), attempt
        )
        return self._write_one(
            run_id, lambda cursor, p: claims.write_starts(cursor, p, [start], self.holder)
        )

    def record_job(self, run_id: int, pid: int, started: str | None) -> bool:
        """Record the process of a running run's job (``identity.start_marker`` in ``started``),
        so that a start after this process died can stop what is left of it. False if the run
        is no longer ``running``."""
        return self._update_running(run_id, {RunRow.job_pid: pid, RunRow.job_started: started})

    def orphaned_jobs(self) -> dict[int, identity.Job]:
        """Run id → job process, for the running runs whose owner died and whose job was recorded.

        Read before ``interrupt_orphans``, so the caller can stop those processes first: the job
        may well have outlived the process that started it.
        """
        with self._using():
            return {
                row.id: identity.Job(pid=row.job_pid, started=row.job_started)
                for row in RunRow.select().where(self._mine(RunRow.status == codec.RUNNING))
                if row.job_pid is not None and not _rows.owner_alive(row)
            }

    def unrecorded_orphans(self) -> dict[int, str]:
        """Run id → its owner's token, for the running runs whose owner died before their job's
        process was on record (a write lock held past the crash): their job is found by the
        tags of its environment (``identity.tagged_jobs``)."""
        with self._using():
            return {
                row.id: row.owner_token
                for row in RunRow.select().where(
                    self._mine((RunRow.status == codec.RUNNING) & RunRow.job_pid.is_null())
                )
                if row.owner_token and not _rows.owner_alive(row)
            }

    def finish_run(
        self,
        run_id: int,
        *,
        status: RunStatus,
        finished_at: datetime,
        exit_code: int | None = None,
        reason: str | None = None,
        output_tail: str | None = None,
    ) -> bool:
        """Record a running run's outcome. The first outcome wins: False if it had already ended
        (e.g. marked ``interrupted`` when its process was believed dead)."""
        finish = claims.Finish(run_id, status, finished_at, exit_code, reason, output_tail)
        return self._write_one(run_id, lambda cursor, p: claims.write_finishes(cursor, p, [finish]))

    def get_run(self, run_id: int) -> Run:
        with self._using():
            return _rows.run(_rows.run_row(run_id))

    def runs_by_id(self, run_ids: Collection[int]) -> dict[int, Run]:
        """The runs of ``run_ids`` that exist, read in a few queries (a burst of results shown
        at once, not one read per run)."""
        ids = sorted(set(run_ids))
        found: dict[int, Run] = {}
        with self._using():
            for chunk in codec.in_chunks(ids):
                found.update(
                    (row.id, _rows.run(row)) for row in RunRow.select().where(RunRow.id.in_(chunk))
                )
        return found

    def runs(
        self,
        schedule_id: int | None = None,
        status: RunStatus | None = None,
        limit: int | None = 100,
        before_id: int | None = None,
        *,
        paused: bool = True,
    ) -> list[Run]:
        """Runs newest first (by id); ``before_id`` pages on from the previous page's last id;
        ``paused`` False leaves out the dues a recorded pause kept from running."""
        with self._using():
            query = RunRow.select().where(self._run_filter(schedule_id, status, paused=paused))
            if before_id is not None:
                query = query.where(RunRow.id < before_id)
            return [_rows.run(row) for row in query.order_by(RunRow.id.desc()).limit(limit)]

    def failures_since_success(
        self, schedule_ids: Collection[int], *, besides: Collection[int] = (), limit: int = 200
    ) -> dict[int, list[tuple[RunStatus, str | None, datetime]]]:
        """Each schedule's ended ``failed`` and ``timed_out`` runs after its latest success, newest
        first, at most ``limit`` (status, reason, finished at), the runs ``besides`` left out: all
        that its alerts' state is made of. One query for many schedules: the first results of
        hundreds of schedules after a wake come in one batch.

        In SQL of its own: peewee turns each id of an ``IN`` into a parameter at 3-6 us apiece,
        and the runs ``besides`` went into every chunk's query: 80 ms in the GUI thread as the
        first results of a 10,000-schedule wake came in (``bench/wake_bench.py`` with ``GAPS``).
        The failures are few, so ``besides`` is left out as they are read."""
        found: dict[int, list[tuple[RunStatus, str | None, datetime]]] = {
            schedule_id: [] for schedule_id in schedule_ids
        }
        left_out = frozenset(besides)
        param = self._db.param
        with self._using():
            cursor = self._db.cursor()  # type: ignore[no-untyped-call]
            for chunk in codec.in_chunks(list(found)):
                cursor.execute(
                    _FAILURES.format(ids=codec.marks(param, len(chunk)), p=param),
                    (*chunk, *_FAILED, RunStatus.succeeded.value),
                )
                for run_id, schedule_id, status, reason, finished in cursor.fetchall():
                    kept = found[schedule_id]
                    if run_id not in left_out and len(kept) < limit:
                        kept.append((RunStatus(status), reason, codec.from_micros(finished)))
        return found

    def count_runs(
        self,
        schedule_id: int | None = None,
        status: RunStatus | None = None,
        *,
        paused: bool = True,
    ) -> int:
        with self._using():
            condition = self._run_filter(schedule_id, status, paused=paused)
            return int(RunRow.select().where(condition).count())

    def running_runs(self) -> list[Run]:
        return self.runs(status=RunStatus.running, limit=None)

    def interrupt_orphans(self, now: datetime, notes: Mapping[int, str] = EMPTY) -> list[Run]:
        """Mark ``interrupted`` the running runs whose process died; return those to resume.

        A run of this process or of another live process is left alone. Every orphan is marked
        (reason ``PROCESS_DIED``, then ``; `` and its entry in ``notes`` if it has one: what was
        done about its leftover processes; finished at ``now``) but only those that may be re-run
        once are returned: not a run that was itself a resume (a job that kills its runner must not
        loop), and not one that already has a resumed child. Marking happens once, so a run is
        never returned twice; resume it with ``record_manual_run(..., Trigger.resumed,
        resumed_from=id)``.
        """
        stamp = codec.to_micros(now)
        with self._using(), self._atomic():
            orphans = [
                row
                for row in RunRow.select().where(self._mine(RunRow.status == codec.RUNNING))
                if not _rows.owner_alive(row)
            ]
            if not orphans:
                return []
            ids = [row.id for row in orphans]
            RunRow.update(
                status=RunStatus.interrupted.value, reason=PROCESS_DIED, finished_at=stamp
            ).where(RunRow.id.in_(ids)).execute()
            for run_id in set(ids) & set(notes):
                RunRow.update(reason=f"{PROCESS_DIED}; {notes[run_id]}").where(
                    RunRow.id == run_id
                ).execute()
            resumed = {
                row.resumed_from
                for row in RunRow.select(RunRow.resumed_from).where(RunRow.resumed_from.in_(ids))
            }
            again = [
                row.id
                for row in orphans
                if row.trigger != Trigger.resumed.value and row.id not in resumed
            ]
            return [
                _rows.run(row)
                for row in RunRow.select().where(RunRow.id.in_(again)).order_by(RunRow.id)
            ]

    def prune(
        self,
        now: datetime,
        keep_per_schedule: int = retention.KEEP_PER_SCHEDULE,
        max_age: timedelta = retention.MAX_AGE,
    ) -> int:
        """Delete finished runs fired more than ``max_age`` before ``now`` or beyond the newest
        ``keep_per_schedule`` of their schedule, and their log files. Running runs are never
        touched. Returns how many runs went.

        The deletes go in chunks of ``retention.DELETE_CHUNK``, each its own transaction, so a
        claim of another thread or process waits for one chunk at most. The app calls this on
        its worker after a wake; opening only drops the expired runs (``prune_expired``).
        """
        return self._delete_runs(self.doomed_runs(now, keep_per_schedule, max_age))

    def doomed_runs(
        self,
        now: datetime,
        keep_per_schedule: int = retention.KEEP_PER_SCHEDULE,
        max_age: timedelta = retention.MAX_AGE,
    ) -> dict[int, str | None]:
        """What ``prune`` deletes (run id -> its log), read only: the engine's recorder
        deletes them on its own connection (``Writer.delete_runs``). Read a span of schedules
        at a time: the readers' connection is the windows' too, and they wait for each read."""
        with self._using():
            doomed = retention.expired(now, max_age)
            spans = retention.schedule_spans(retention.CROWD_SPAN)
        for span in spans:
            with self._using():
                doomed.update(retention.crowded(keep_per_schedule, span))
        return doomed

    def remove_logs(self, paths: Sequence[str]) -> None:
        """The log files of deleted runs (only those inside the data dir's log folder)."""
        retention.remove_logs(self.log_dir, paths)

    def prune_expired(self, now: datetime, max_age: timedelta = retention.MAX_AGE) -> int:
        """Only the age criterion: an index range, cheap enough for every open."""
        with self._using():
            doomed = retention.expired(now, max_age)
        return self._delete_runs(doomed)

    def check_integrity(self, *, full: bool = False) -> None:
        """Read every page (``quick_check``; ``integrity_check`` when ``full``); ``StoreError``
        when the file is damaged. Opening does this only after an unclean shutdown. PostgreSQL
        checks its own pages (``data_checksums``): nothing to do there."""
        with self._using():
            if self.target.url is None:
                _open.check_integrity(self.path, full=full)

    # -- leases (machines sharing a PostgreSQL store) -------------------------------------------

    def renew_leases(self, run_ids: Collection[int], now: datetime) -> set[int]:
        """Extend this machine's leases on its running runs; returns the ids it no longer holds:
        another machine took them over after their lease expired, so their jobs must stop and
        nothing more is recorded for them."""
        with self._using(), claims.write_transaction(self._db) as cursor:
            return leases.renew(cursor, self._db.param, self.holder, run_ids, now)

    def take_over_expired(
        self, now: datetime, schedule_ids: Collection[int] | None = None
    ) -> list[Run]:
        """Mark ``interrupted`` the running runs of other machines whose lease expired (reason
        ``lease expired on machine X``); returns those to re-run here, once, with
        ``record_manual_run(..., Trigger.resumed, resumed_from=id)``."""
        with self._using():
            with claims.write_transaction(self._db) as cursor:
                ids = leases.take_over(cursor, self._db.param, self.holder, now, schedule_ids)
            return [_rows.run(row) for row in RunRow.select().where(RunRow.id.in_(ids))]

    def superseded_by(self, run_id: int) -> str | None:
        """The machine that re-ran ``run_id`` after its lease expired, if one did."""
        with self._using():
            cursor = self._db.cursor()  # type: ignore[no-untyped-call]
            return leases.superseded_by(cursor, self._db.param, run_id)

    # -- runs waiting for their conditions (``store.waiting``) ---------------------------------

    def waiting_runs(self) -> list[Run]:
        """The runs held back by their conditions, oldest first (to re-gate after a restart)."""
        with self._using():
            return waiting.waiting_runs()

    def start_waiting(
        self,
        run_id: int,
        started_at: datetime,
        log_path: str | os.PathLike[str] | None,
        *,
        late: bool,
        reason: str | None,
    ) -> bool:
        """A waiting run starts now (``running``, owned by this process, ``reason`` saying what
        it waited for); False when it is no longer waiting."""
        path = None if log_path is None else os.fspath(log_path)
        with self._using(), claims.write_transaction(self._db):
            return waiting.start_waiting(run_id, started_at, path, late=late, reason=reason)

    def skip_waiting(self, run_id: int, finished_at: datetime, reason: str) -> bool:
        """A waiting run is given up (its deadline passed); False when it is no longer waiting."""
        with self._using(), claims.write_transaction(self._db):
            return waiting.skip_waiting(run_id, finished_at, reason)

    def record_waiting_run(
        self,
        schedule_id: int,
        due: datetime | None,
        fired_at: datetime,
        reason: str,
        resumed_from: int,
    ) -> int:
        """A ``waiting`` re-run (trigger ``resumed``) of a run stopped for a lost condition."""
        with self._using(), claims.write_transaction(self._db):
            return waiting.record_waiting(schedule_id, due, fired_at, reason, resumed_from)

    def last_successes(self) -> dict[int, datetime]:
        """Schedule id -> when its latest succeeded run finished."""
        with self._using():
            return waiting.last_successes()
