"""The hot path: a wake's claims, starts and finishes written at close to the database's speed.

Peewee builds the rest of the store's SQL; here it is written once, with the database's own
placeholder (``Database.param``), and run on the driver's cursor (``executemany`` on SQLite),
because building ``insert_many`` queries was three quarters of a claim's cost. On PostgreSQL a
batch is one statement, never a pipeline (``_many``). The SQL is portable
(``RETURNING`` is in SQLite >= 3.35 and PostgreSQL); what differs between databases (how a write
transaction begins, whether one is still open after an error) is in ``_Dialect``.

The compare-and-set of a claim is the one of ``Store.claim_fire``, which calls ``write_claims``
too: two processes on one file never both claim a due.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from peewee import Database, SqliteDatabase

from domi_desktop.actions import identity
from domi_desktop.errors import NotFoundError, StoreError, StoreUnavailable
from domi_desktop.model import FireClaim, RunStatus, SkipReason, Trigger
from domi_desktop.store import _open, backend, codec, retention

_COLUMNS = (
    'schedule_id, status, "trigger", due, fired_at, reason, late, missed_count, attempt, '
    "owner_pid, owner_token, owner_started, machine, lease_until"
)
_RUNNING = RunStatus.running.value

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Holder:
    """Who writes a claim: the machine's name, and how long a lease it takes on a running run."""

    machine: str
    lease: timedelta

    def lease_until(self, now: datetime) -> int:
        return codec.to_micros(now + self.lease)


@dataclass(frozen=True, slots=True)
class Start:
    """A claimed run's action starts: ``Store.start_run`` for many runs at once."""

    run_id: int
    started_at: datetime
    log_path: str | None
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class Finish:
    """A run's outcome: ``Store.finish_run`` for many runs at once."""

    run_id: int
    status: RunStatus
    finished_at: datetime
    exit_code: int | None = None
    reason: str | None = None
    output_tail: str | None = None


class _Dialect:
    """What is not the same SQL on every database the store may run on."""

    def __init__(self, db: Database) -> None:
        self.param = db.param
        # PostgreSQL (READ COMMITTED): the compare-and-set ``UPDATE`` takes the schedule's row
        # lock; a second writer waits for it, then re-checks ``last_due`` on the committed row
        # and matches nothing. That is the whole claim protocol, so no stronger level is needed.
        self.begin = "BEGIN IMMEDIATE" if isinstance(db, SqliteDatabase) else "BEGIN"

    @staticmethod
    def in_transaction(connection: Any) -> bool:
        # A full disk makes SQLite roll back on its own; a second ROLLBACK would then fail with
        # "cannot rollback - no transaction is active" and hide the real error.
        if isinstance(connection, sqlite3.Connection):
            return connection.in_transaction
        return True


@contextmanager
def write_transaction(db: Database) -> Iterator[Any]:
    """One write transaction on ``db``'s connection of this thread; yields its cursor."""
    dialect = _Dialect(db)
    cursor = db.cursor()  # type: ignore[no-untyped-call]
    cursor.execute(dialect.begin)
    try:
        yield cursor
    except BaseException:
        if dialect.in_transaction(db.connection()):  # type: ignore[no-untyped-call]
            cursor.execute("ROLLBACK")
        raise
    try:
        cursor.execute("COMMIT")
    except BaseException:
        if dialect.in_transaction(db.connection()):  # type: ignore[no-untyped-call]
            cursor.execute("ROLLBACK")
        raise


def check_claim(claim: FireClaim) -> None:
    if claim.status not in (RunStatus.running, RunStatus.skipped, RunStatus.waiting):
        raise ValueError(f"a fire is recorded running or skipped, not {claim.status.value}")
    if claim.missed_count < len(claim.skipped):
        raise ValueError(
            f"missed_count {claim.missed_count} < {len(claim.skipped)} skipped instants"
        )
    expected = claim.expected_last_due
    if expected is not None and claim.due <= expected:
        raise ValueError(f"due {claim.due.isoformat()} is not after last_due {expected}")


def _delete(param: str, ids: Sequence[int], cursor: Any) -> int:
    marks = ", ".join([param] * len(ids))
    cursor.execute(f"DELETE FROM runs WHERE id IN ({marks}) AND status != '{_RUNNING}'", ids)
    return int(cursor.rowcount)


def write_claims(
    cursor: Any,
    param: str,
    claims: Sequence[FireClaim],
    holder: Holder,
    *,
    gone_is_lost: bool = False,
    busy: set[int] | None = None,
) -> list[int | None]:
    """The claims, in the caller's write transaction: per claim, the fire row's id, or None when
    ``last_due`` had moved on (nothing written for it). A schedule that is gone raises
    ``NotFoundError``, or with ``gone_is_lost`` is None like a lost claim. Skipped rows go in
    before their fire row, so ids keep the order of the dues. An ``exclusive`` claim that finds
    its schedule running on another machine is recorded skipped ``busy``, its id added to
    ``busy``."""
    p = param
    cas = f"UPDATE schedules SET last_due = {p} WHERE id = {p} AND last_due = {p}"
    cas_null = f"UPDATE schedules SET last_due = {p} WHERE id = {p} AND last_due IS NULL"
    exists = f"SELECT 1 FROM schedules WHERE id = {p}"
    # After the compare-and-set, which holds the schedule's row: another machine's claim of the
    # same schedule waits here, so two machines never both see the other idle.
    elsewhere = (
        f"SELECT 1 FROM runs WHERE schedule_id = {p} AND status = '{_RUNNING}' "
        f"AND machine IS NOT NULL AND machine <> {p} LIMIT 1"
    )
    values = ", ".join([p] * 14)
    insert = f"INSERT INTO runs ({_COLUMNS}) VALUES ({values})"
    owner = identity.this_process()
    pid, token, started = owner.pid, owner.token, owner.started
    machine = holder.machine
    scheduled, skipped_status = Trigger.scheduled.value, RunStatus.skipped.value
    ids: list[int | None] = []
    for claim in claims:
        sid = claim.schedule_id
        due = codec.to_micros(claim.due)
        if claim.expected_last_due is None:
            cursor.execute(cas_null, (due, sid))
        else:
            cursor.execute(cas, (due, sid, codec.to_micros(claim.expected_last_due)))
        if cursor.rowcount != 1:
            if not gone_is_lost and cursor.execute(exists, (sid,)).fetchone() is None:
                raise NotFoundError(f"no schedule with id {sid}")
            ids.append(None)
            continue
        fired = codec.to_micros(claim.fired_at)
        if claim.skipped:
            why = claim.skip_reason.value
            _many(
                cursor,
                p,
                insert,
                [
                    (sid, skipped_status, scheduled, codec.to_micros(instant), fired, why,
                     False, 0, 0, pid, token, started, machine, None)
                    for instant in claim.skipped
                ],
            )  # fmt: skip
        reason = claim.reason.value if isinstance(claim.reason, SkipReason) else claim.reason
        status = claim.status
        taken = (
            status is RunStatus.running
            and claim.exclusive
            and cursor.execute(elsewhere, (sid, machine)).fetchone() is not None
        )
        if taken:
            status, reason = RunStatus.skipped, SkipReason.busy.value
        lease = holder.lease_until(claim.fired_at) if status is RunStatus.running else None
        cursor.execute(
            insert + " RETURNING id",
            (sid, status.value, claim.trigger.value, due, fired, reason, claim.late,
             claim.missed_count, 0, pid, token, started, machine, lease),
        )  # fmt: skip
        run_id = int(cursor.fetchone()[0])
        ids.append(run_id)
        if taken and busy is not None:
            busy.add(run_id)
    return ids


def write_manual_run(
    cursor: Any,
    param: str,
    schedule_id: int,
    fired_at: datetime,
    trigger: Trigger,
    holder: Holder,
    resumed_from: int | None = None,
    status: RunStatus = RunStatus.running,
    reason: str | None = None,
) -> int:
    """``Store.record_manual_run`` in the caller's write transaction: a ``running`` run outside
    the calendar (``last_due`` untouched); a run is resumed at most once. A session trigger's
    run its conditions hold back is recorded ``waiting`` or ``skipped`` instead, with why."""
    p = param
    if cursor.execute(f"SELECT 1 FROM schedules WHERE id = {p}", (schedule_id,)).fetchone() is None:
        raise NotFoundError(f"no schedule with id {schedule_id}")
    if resumed_from is not None:
        cursor.execute(f"SELECT id FROM runs WHERE resumed_from = {p}", (resumed_from,))
        earlier = cursor.fetchone()
        if earlier is not None:
            raise StoreError(f"run {resumed_from} was already resumed as run {earlier[0]}")
    owner = identity.this_process()
    values = ", ".join([p] * 15)
    cursor.execute(
        f"INSERT INTO runs ({_COLUMNS}, resumed_from) VALUES ({values}) RETURNING id",
        (schedule_id, status.value, trigger.value, None, codec.to_micros(fired_at), reason,
         False, 0, 0, owner.pid, owner.token, owner.started, holder.machine,
         holder.lease_until(fired_at) if status is RunStatus.running else None, resumed_from),
    )  # fmt: skip
    return int(cursor.fetchone()[0])


def _many(cursor: Any, param: str, insert: str, rows: Sequence[tuple[object, ...]]) -> None:
    """``insert`` (``INSERT ... VALUES (...)``) for each of ``rows``: SQLite reuses its prepared
    statement (``executemany``); PostgreSQL gets one statement of many rows. psycopg sends an
    ``executemany`` as a pipeline, and until the pipeline's end the server counts the session as
    busy, not idle in its transaction: a machine that froze in the middle of one (a lid closed)
    kept its row locks, and every other machine's claims and take-overs waited, past the
    server's limit on idle sessions (``backend.IDLE_IN_TRANSACTION``)."""
    if param == "?":
        cursor.executemany(insert, rows)
        return
    head, _, row = insert.rpartition(" VALUES ")
    values = ", ".join([row] * len(rows))
    cursor.execute(f"{head} VALUES {values}", [value for each in rows for value in each])


def write_starts(cursor: Any, param: str, starts: Sequence[Start], holder: Holder) -> list[bool]:
    """``start_run`` for each; False where the run had already ended (do not start it), or was
    taken over by another machine after its lease expired."""
    p = param
    sql = (
        f"UPDATE runs SET started_at = {p}, attempt = {p}, job_pid = NULL, job_started = NULL, "
        f"log_path = COALESCE({p}, log_path), lease_until = {p} "
        f"WHERE id = {p} AND status = '{_RUNNING}' AND (machine IS NULL OR machine = {p})"
    )
    done: list[bool] = []
    for start in starts:
        cursor.execute(
            sql,
            (codec.to_micros(start.started_at), start.attempt, start.log_path,
             holder.lease_until(start.started_at), start.run_id, holder.machine),
        )  # fmt: skip
        done.append(cursor.rowcount == 1)
    return done


def write_finishes(cursor: Any, param: str, finishes: Sequence[Finish]) -> list[bool]:
    """``finish_run`` for each; False where the run had already ended (the first outcome wins)."""
    p = param
    sql = (
        f"UPDATE runs SET status = {p}, finished_at = {p}, exit_code = {p}, reason = {p}, "
        f"output_tail = {p} WHERE id = {p} AND status = '{_RUNNING}'"
    )
    done: list[bool] = []
    for finish in finishes:
        if finish.status is RunStatus.running:
            raise ValueError("finish_run needs a final status, not running")
        cursor.execute(
            sql,
            (finish.status.value, codec.to_micros(finish.finished_at), finish.exit_code,
             finish.reason, finish.output_tail, finish.run_id),
        )  # fmt: skip
        done.append(cursor.rowcount == 1)
    return done


Patience = Callable[[StoreUnavailable, int], bool]
"""Asked when a write found the database unavailable, with the error and the tries so far: True
to try the same transaction again (after waiting as long as it likes), False to give up."""


def _impatient(_error: StoreUnavailable, _tries: int) -> bool:
    return False


class Writer:
    """The hot path on a connection of its own, for one thread (the engine's recorder): readers
    of the main connection (the History window, ``app.status``) never wait behind a wake's
    transaction. Each write is one transaction; one the database could not take is rolled back
    whole, so ``patience`` may have it tried again as it was."""

    def __init__(
        self, db: Database, path: Path | str, holder: Holder, patience: Patience = _impatient
    ) -> None:
        self._db = db
        self._param = db.param
        self.path = path
        self.holder = holder
        self.patience = patience

    @classmethod
    def postgresql(cls, url: str, holder: Holder) -> Writer:
        db = backend.postgresql(url)
        label = backend.hide_password(url)
        with _open.translate_errors(label):
            db.connect()
        return cls(db, label, holder)

    @classmethod
    def sqlite(cls, path: Path, holder: Holder) -> Writer:
        db = _open.sqlite_database(path)
        with _open.translate_errors(path):
            db.connect()
        return cls(db, path, holder)

    def claim(self, claims: Sequence[FireClaim]) -> tuple[list[int | None], frozenset[int]]:
        """All the claims in one transaction: their ids, and the runs recorded ``busy`` because
        another machine runs their schedule (``FireClaim.exclusive``). A claim whose schedule is
        gone is None, like a lost one: the batch of a wake must not fail for one schedule deleted
        meanwhile."""
        for claim in claims:
            check_claim(claim)

        def write(cursor: Any) -> tuple[list[int | None], frozenset[int]]:
            busy: set[int] = set()
            ids = write_claims(
                cursor, self._param, claims, self.holder, gone_is_lost=True, busy=busy
            )
            return ids, frozenset(busy)

        return self.transact(write)

    def start(self, starts: Sequence[Start]) -> list[bool]:
        return self.transact(lambda cursor: write_starts(cursor, self._param, starts, self.holder))

    def finish(self, finishes: Sequence[Finish]) -> list[bool]:
        return self.transact(lambda cursor: write_finishes(cursor, self._param, finishes))

    def record_manual(
        self,
        schedule_id: int,
        fired_at: datetime,
        trigger: Trigger,
        resumed_from: int | None = None,
        *,
        start: Start | None = None,
        status: RunStatus = RunStatus.running,
        reason: str | None = None,
    ) -> int:
        """A manual (or resumed) run recorded, and with ``start`` (its ``run_id`` ignored)
        started, in one transaction; its id. ``status``: see ``write_manual_run``."""

        def write(cursor: Any) -> int:
            run_id = write_manual_run(
                cursor, self._param, schedule_id, fired_at, trigger, self.holder, resumed_from,
                status, reason,
            )  # fmt: skip
            if start is not None:
                started = replace(start, run_id=run_id)
                write_starts(cursor, self._param, [started], self.holder)
            return run_id

        return self.transact(write)

    def abandon(self, keep: Collection[int], now: datetime, reason: str) -> int:
        """This process's runs still ``running`` with no job on record, but ``keep``: claimed by a
        wake the app quit before launching. Recorded ``interrupted`` with ``reason``; how many."""
        p = self._param
        token = identity.this_process().token
        unlaunched = (
            f"SELECT id FROM runs WHERE status = '{_RUNNING}' AND job_pid IS NULL "
            f"AND owner_token = {p}"
        )
        end = (
            f"UPDATE runs SET status = {p}, finished_at = {p}, reason = {p} "
            f"WHERE id = {p} AND status = '{_RUNNING}'"
        )

        def write(cursor: Any) -> int:
            cursor.execute(unlaunched, (token,))
            ids = [int(row[0]) for row in cursor.fetchall() if int(row[0]) not in keep]
            for run_id in ids:
                interrupted = RunStatus.interrupted.value
                cursor.execute(end, (interrupted, codec.to_micros(now), reason, run_id))
            return len(ids)

        return self.transact(write)

    def record_jobs(self, jobs: Sequence[tuple[int, int, str | None]]) -> None:
        """``Store.record_job`` for many (run id, pid, start marker) in one transaction; a run
        that is no longer ``running`` is left as it is."""
        p = self._param
        sql = f"UPDATE runs SET job_pid = {p}, job_started = {p} WHERE id = {p} AND status = {p}"

        def write(cursor: Any) -> None:
            # One statement each, not ``executemany``: on PostgreSQL that is a pipeline (``_many``).
            for run_id, pid, started in jobs:
                cursor.execute(sql, (pid, started, run_id, _RUNNING))

        self.transact(write)

    def delete_runs(self, ids: Sequence[int]) -> int:
        """Delete these runs unless they run (again), in chunks of ``retention.DELETE_CHUNK``,
        each its own transaction: a claim waits for one chunk at most."""
        deleted = 0
        for start in range(0, len(ids), retention.DELETE_CHUNK):
            chunk = list(ids[start : start + retention.DELETE_CHUNK])
            deleted += self.transact(partial(_delete, self._param, chunk))
        return deleted

    def transact(self, body: Callable[[Any], T]) -> T:
        """``body(cursor)`` in one write transaction, tried again while ``patience`` says so."""
        tries = 0
        while True:
            try:
                with _open.translate_errors(self.path):
                    backend.revive(self._db)
                    with write_transaction(self._db) as cursor:
                        return body(cursor)
            except StoreUnavailable as error:
                tries += 1
                if not self.patience(error, tries):
                    raise

    def close(self) -> None:
        self._db.close()
