"""The store: schedules and runs in one SQLite file (or a shared PostgreSQL database, see
``backend``), behind an API of plain dataclasses.

Every method takes the instants it records (``now``, ``fired_at``...) from the caller: the store
never reads the clock, so the scheduler's fake clock drives it in tests like everything else.

Threads: one connection per store, shared by all threads under a lock, so a store can be handed to
worker threads and ``close`` really closes. Processes: every write is a ``BEGIN IMMEDIATE``
transaction, so two processes on one file serialise (waiting up to ``BUSY_TIMEOUT`` seconds). On
PostgreSQL the row locks of the conditional updates serialise machines (``claims._Dialect``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any

from peewee import Database, IntegrityError, SqliteDatabase

from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import (
    PROCESS_DIED,
    Action,
    FireClaim,
    Policies,
    Run,
    RunStatus,
    Schedule,
    Trigger,
)
from domi_desktop.store import (
    _open,
    _replan,
    _rows,
    backend,
    claims,
    codec,
    copy,
    leases,
    listen,
    liveness,
    migrations,
    retention,
    waiting,
)
from domi_desktop.store.models import RunRow, ScheduleRow, database
from domi_desktop.store.paths import (
    DB_FILENAME,
    LOG_DIRNAME,
    create_private_file,
    ensure_private_dir,
    resolve_data_dir,
)

log = logging.getLogger(__name__)

_RUNNING = RunStatus.running.value
EMPTY: Mapping[int, str] = MappingProxyType({})

DEFAULT_POLICIES = Policies()

_open_guard = threading.Lock()


class Store:
    """Schedules and their runs. Open with ``Store.open``; one open store per process.

    The models are bound through one module-level ``peewee.DatabaseProxy`` (the Vorta pattern),
    hence one open store at a time: opening a second raises instead of rebinding the first.
    """

    def __init__(
        self,
        db: Database,
        data_dir: Path,
        migration_backup: Path | None,
        target: backend.Target | None = None,
        holder: claims.Holder | None = None,
    ) -> None:
        self._db = db
        self.data_dir = data_dir
        self.path = data_dir / DB_FILENAME
        self.target = target or backend.Target(None, self.path)
        self.location = self.target.label
        """The file, or the PostgreSQL URL without its password: what messages name."""
        self.holder = holder or claims.Holder(
            backend.machine_name(), timedelta(seconds=backend.LEASE)
        )
        self.migration_backup = migration_backup
        """The copy made before this open migrated the file, else None (to tell the user)."""
        self._lock = threading.RLock()
        self._closed = False

    # -- opening and closing -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        now: datetime,
        url: str | None = None,
        machine: str | None = None,
    ) -> Store:
        """Open (creating or migrating) ``domi.sqlite3`` in the data dir, then drop expired runs.

        ``url`` (else ``$DOMI_STORE``) names a shared PostgreSQL database instead; the data dir
        then keeps only the run logs. ``machine`` (else ``$DOMI_MACHINE``, else the host name) is
        the name this process claims runs under.

        Every page is checked (``quick_check``) only when the last process left the file open
        (killed, crashed, power lost); otherwise the header is checked, not the whole file.

        ``data_dir`` is the ``--data-dir`` option; see ``resolve_data_dir``. A file that is not a
        domi-desktop database, is corrupt, unreadable or from a newer release raises ``StoreError``
        naming it, and is left exactly as it was.
        """
        directory = resolve_data_dir(data_dir)
        path = directory / DB_FILENAME
        target = backend.Target(backend.resolve_url(url), path)
        holder = claims.Holder(
            backend.machine_name(machine), timedelta(seconds=backend.lease_seconds())
        )
        if target.url is not None:
            return cls._open_postgresql(directory, target, holder, now)
        with _open_guard:
            if database.obj is not None:
                raise RuntimeError("a store is already open in this process; close it first")
            try:
                ensure_private_dir(directory)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the data directory {directory}: {exc.strerror or exc}"
                ) from exc
            _open.refuse_unusable_file(path)
            unclean = _open.was_left_open(path)
            try:
                create_private_file(path)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the database {path}: {exc.strerror or exc}"
                ) from exc
            db = SqliteDatabase(
                str(path),
                pragmas=[("foreign_keys", "ON"), ("synchronous", "FULL")],
                timeout=_open.BUSY_TIMEOUT,
                thread_safe=False,
                autoconnect=False,
                check_same_thread=False,
            )
            database.initialize(db)
            try:
                with _open.translate_errors(path):
                    db.connect()
                    backup = _open.prepare(path, check=unclean)
                    _open.tighten_modes(path)
            except BaseException:
                database.initialize(None)
                db.close()
                raise
        return cls._opened(cls(db, directory, backup, target, holder), now)

    @classmethod
    def _open_postgresql(
        cls, directory: Path, target: backend.Target, holder: claims.Holder, now: datetime
    ) -> Store:
        assert target.url is not None
        with _open_guard:
            if database.obj is not None:
                raise RuntimeError("a store is already open in this process; close it first")
            db = backend.postgresql(target.url)
            database.initialize(db)
            try:
                with _open.translate_errors(target.label):
                    ensure_private_dir(directory)
                    db.connect()
                    migrations.migrate_postgresql(target.label)
            except BaseException:
                database.initialize(None)
                db.close()
                raise
        return cls._opened(cls(db, directory, None, target, holder), now)

    @classmethod
    def _opened(cls, store: Store, now: datetime) -> Store:
        try:
            store.prune_expired(now)
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with _open_guard:
                database.initialize(None)
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        with self._using():
            return migrations.read_version(self.location)

    @property
    def machine(self) -> str:
        return self.holder.machine

    @property
    def shared(self) -> bool:
        """True on PostgreSQL: other machines may claim from the same schedules."""
        return self.target.shared

    # -- logs ----------------------------------------------------------------------------------

    @property
    def log_dir(self) -> Path:
        """Where run logs go; created (mode 0700) by ``log_path_for``."""
        return self.data_dir / LOG_DIRNAME

    def log_path_for(self, run_id: int) -> Path:
        try:
            ensure_private_dir(self.log_dir)
        except OSError as exc:
            raise StoreError(f"cannot create the log directory {self.log_dir}: {exc}") from exc
        return self.log_dir / f"run-{run_id}.log"

    # -- schedules -----------------------------------------------------------------------------

    def create_schedule(
        self,
        name: str,
        expr: str,
        tz: str,
        action: Action,
        policies: Policies = DEFAULT_POLICIES,
        *,
        enabled: bool = True,
        now: datetime,
    ) -> Schedule:
        """A new schedule starts with ``last_due = now``: nothing fires for the past (SPEC §3)."""
        stamp = codec.to_micros(now)
        with self._using(), self._atomic():
            schedule_id = ScheduleRow.insert(
                name=name,
                expr=expr,
                tz=tz,
                enabled=enabled,
                action=codec.encode_action(action),
                policies=codec.encode_policies(policies),
                last_due=stamp,
                created_at=stamp,
                updated_at=stamp,
            ).execute()
            self._changed()
            return self._schedule(_rows.schedule_row(int(schedule_id)))

    def get_schedule(self, schedule_id: int) -> Schedule:
        with self._using():
            return self._schedule(_rows.schedule_row(schedule_id))

    def list_schedules(self) -> list[Schedule]:
        """The schedules that can be read, by id; ``read_schedules`` also names the others."""
        return self.read_schedules()[0]

    def read_schedules(self) -> tuple[list[Schedule], dict[int, str]]:
        """The readable schedules by id, and the id of each unreadable row with the reason.

        A row whose stored action or policies cannot be decoded must not take the others down
        (issue 9: one such row stopped all 39 healthy schedules); nor may it vanish silently, so
        it is reported for the scheduler's log and ``schedule list``. ``delete_schedule`` and
        ``update_schedule(action=..., policies=...)`` still work on it, to repair or remove it.
        """
        schedules: list[Schedule] = []
        broken: dict[int, str] = {}
        with self._using():
            for row in ScheduleRow.select().order_by(ScheduleRow.id):
                try:
                    schedules.append(self._schedule(row))
                except StoreError as error:
                    broken[row.id] = str(error)
        return schedules, broken

    def data_version(self) -> int:
        """A number that changes when another connection (another process) commits a change."""
        with self._using():
            return _replan.data_version()

    def rebase_last_due(
        self, schedule_id: int, expected: datetime | None, last_due: datetime
    ) -> bool:
        """Set ``last_due`` back to ``last_due`` if it still is ``expected`` (compare-and-set).

        For a wall clock set back behind ``last_due``: the scheduler plans from the clock again;
        the dues already decided stay recorded and ``decided_ahead`` names them.
        """
        with self._using():
            return _replan.rebase(schedule_id, expected, last_due)

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        """Schedule id → dues already run or skipped that lie after its ``last_due`` (after
        ``rebase_last_due``): they must never be decided again."""
        with self._using():
            return _replan.decided_ahead()

    def update_schedule(
        self,
        schedule_id: int,
        *,
        now: datetime,
        name: str | None = None,
        expr: str | None = None,
        tz: str | None = None,
        action: Action | None = None,
        policies: Policies | None = None,
        enabled: bool | None = None,
    ) -> Schedule:
        """Change the given fields (None leaves one as it is).

        A new expression or zone, or re-enabling, sets ``last_due = now``: the old ``last_due`` was
        measured against another calendar, or the pause was the user's choice, and either way the
        past must not fire (SPEC §3).
        """
        stamp = codec.to_micros(now)
        with self._using(), self._atomic():
            row = _rows.schedule_row(schedule_id)
            changes: dict[Any, Any] = {ScheduleRow.updated_at: stamp}
            if name is not None:
                changes[ScheduleRow.name] = name
            if expr is not None:
                changes[ScheduleRow.expr] = expr
            if tz is not None:
                changes[ScheduleRow.tz] = tz
            if action is not None:
                changes[ScheduleRow.action] = codec.encode_action(action)
            if policies is not None:
                changes[ScheduleRow.policies] = codec.encode_policies(policies)
            if enabled is not None:
                changes[ScheduleRow.enabled] = enabled
            if (
                (expr is not None and expr != row.expr)
                or (tz is not None and tz != row.tz)
                or (enabled and not row.enabled)
            ):
                changes[ScheduleRow.last_due] = stamp
            ScheduleRow.update(changes).where(ScheduleRow.id == schedule_id).execute()
            self._changed()
            return self._schedule(_rows.schedule_row(schedule_id))

    def set_enabled(self, schedule_id: int, enabled: bool, now: datetime) -> Schedule:
        return self.update_schedule(schedule_id, now=now, enabled=enabled)

    def delete_schedule(self, schedule_id: int) -> None:
        """Delete the schedule, its runs (the foreign key cascades) and their log files."""
        with self._using():
            with self._atomic():
                logs = [
                    row.log_path
                    for row in RunRow.select(RunRow.log_path).where(
                        RunRow.schedule_id == schedule_id
                    )
                    if row.log_path
                ]
                if not ScheduleRow.delete().where(ScheduleRow.id == schedule_id).execute():
                    raise NotFoundError(f"no schedule with id {schedule_id}")
                self._changed()
            retention.remove_logs(self.log_dir, logs)

    # -- runs ----------------------------------------------------------------------------------

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

    def writer(self) -> claims.Writer:
        """The hot path (claims, starts, finishes in bulk) on a connection of its own, for one
        worker thread; the caller closes it."""
        with self._using():
            if self.target.url is not None:
                return claims.Writer.postgresql(self.target.url, self.holder)
            return claims.Writer.sqlite(self.path, self.holder)

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
        """Record the process of a running run's job (``liveness.start_marker`` in ``started``),
        so that a start after this process died can stop what is left of it. False if the run
        is no longer ``running``."""
        return self._update_running(run_id, {RunRow.job_pid: pid, RunRow.job_started: started})

    def orphaned_jobs(self) -> dict[int, liveness.Job]:
        """Run id → job process, for the running runs whose owner died and whose job was recorded.

        Read before ``interrupt_orphans``, so the caller can stop those processes first: the job
        may well have outlived the process that started it.
        """
        with self._using():
            return {
                row.id: liveness.Job(pid=row.job_pid, started=row.job_started)
                for row in RunRow.select().where(self._mine(RunRow.status == _RUNNING))
                if row.job_pid is not None and not _rows.owner_alive(row)
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

    def runs(
        self,
        schedule_id: int | None = None,
        status: RunStatus | None = None,
        limit: int | None = 100,
        before_id: int | None = None,
    ) -> list[Run]:
        """Runs newest first (by id); ``before_id`` pages on from the previous page's last id."""
        with self._using():
            query = RunRow.select().where(self._run_filter(schedule_id, status))
            if before_id is not None:
                query = query.where(RunRow.id < before_id)
            return [_rows.run(row) for row in query.order_by(RunRow.id.desc()).limit(limit)]

    def count_runs(self, schedule_id: int | None = None, status: RunStatus | None = None) -> int:
        with self._using():
            return int(RunRow.select().where(self._run_filter(schedule_id, status)).count())

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
                for row in RunRow.select().where(self._mine(RunRow.status == _RUNNING))
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
        with self._using():
            doomed = retention.expired(now, max_age)
            doomed.update(retention.crowded(keep_per_schedule))
        return self._delete_runs(doomed)

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

    def count_schedules(self) -> int:
        with self._using():
            return int(ScheduleRow.select().count())

    # -- copying a whole store (``domi-desktop store migrate``) ---------------------------------

    def dump(self) -> copy.Snapshot:
        """Every schedule and run, as stored (``last_due`` included)."""
        with self._using():
            return copy.dump(self._db)

    def load(self, snapshot: copy.Snapshot, *, replace: bool = False) -> None:
        """Make this store an exact copy of ``snapshot``, in one transaction; refuses a store that
        holds schedules or runs unless ``replace``."""
        with self._using():
            copy.load(self._db, snapshot, replace=replace, label=self.location)

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

    # -- internals -----------------------------------------------------------------------------

    def _delete_runs(self, doomed: Mapping[int, str | None]) -> int:
        ids = sorted(doomed)
        deleted = 0
        for start in range(0, len(ids), retention.DELETE_CHUNK):
            with self._using(), claims.write_transaction(self._db):
                deleted += retention.delete(ids[start : start + retention.DELETE_CHUNK])
        retention.remove_logs(self.log_dir, [path for path in doomed.values() if path])
        return deleted

    @contextmanager
    def _using(self) -> Iterator[None]:
        with self._lock, _open.translate_errors(self.location):
            if self._closed:
                raise StoreError(f"the store for {self.location} is closed")
            yield

    def _atomic(self) -> Any:
        """A write transaction: SQLite's write lock up front; PostgreSQL locks rows as it goes."""
        if isinstance(self._db, SqliteDatabase):
            return self._db.atomic("IMMEDIATE")
        return self._db.atomic()

    def _changed(self) -> None:
        """Inside a schedule write: the other instances hear of it when it commits."""
        if self.target.url is not None:
            self._db.execute_sql(listen.NOTIFY)  # type: ignore[no-untyped-call]

    def listener(
        self, on_change: Callable[[], None], on_status: Callable[[str | None], None]
    ) -> listen.ChangeListener | None:
        """A listener for the schedule changes of other instances (started by the caller), or
        None on SQLite, where the per-wake re-read is how they are seen."""
        if self.target.url is None:
            return None
        return listen.ChangeListener(self.target.url, on_change, on_status)

    def _mine(self, condition: Any) -> Any:
        """Runs of this machine (or of before machines were recorded): the ones whose owner's
        liveness can be checked here. Another machine's runs are judged by their lease."""
        return condition & (RunRow.machine.is_null() | (RunRow.machine == self.machine))

    def _schedule(self, row: ScheduleRow) -> Schedule:
        try:
            return Schedule(
                id=row.id,
                name=row.name,
                expr=row.expr,
                tz=row.tz,
                action=codec.decode_action(row.action),
                enabled=row.enabled,
                policies=codec.decode_policies(row.policies),
                last_due=codec.optional_datetime(row.last_due),
                created_at=codec.from_micros(row.created_at),
                updated_at=codec.from_micros(row.updated_at),
            )
        # A hand-edited row may hold text or a huge number where an instant belongs.
        except (ValueError, TypeError, OverflowError) as exc:
            raise StoreError(f"schedule {row.id} in {self.location} cannot be read: {exc}") from exc

    def _run_filter(self, schedule_id: int | None, status: RunStatus | None) -> Any:
        condition: Any = RunRow.id.is_null(False)
        if schedule_id is not None:
            _rows.schedule_row(schedule_id)
            condition &= RunRow.schedule_id == schedule_id
        if status is not None:
            condition &= RunRow.status == status.value
        return condition

    def _write_one(self, run_id: int, write: Callable[[Any, str], list[bool]]) -> bool:
        with self._using(), claims.write_transaction(self._db) as cursor:
            (done,) = write(cursor, self._db.param)
            if not done:
                _rows.run_row(run_id)
            return done

    def _update_running(self, run_id: int, changes: dict[Any, Any]) -> bool:
        with self._using(), claims.write_transaction(self._db):
            updated = (
                RunRow.update(changes)
                .where((RunRow.id == run_id) & (RunRow.status == _RUNNING))
                .execute()
            )
            if not updated:
                _rows.run_row(run_id)
            return bool(updated)
