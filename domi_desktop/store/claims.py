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

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from peewee import Database, SqliteDatabase

from domi_desktop.actions import identity
from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import FireClaim, RunStatus, SkipReason, Trigger
from domi_desktop.store import codec

_COLUMNS = (
    'schedule_id, status, "trigger", due, fired_at, reason, late, missed_count, attempt, '
    "owner_pid, owner_token, owner_started, machine, lease_until"
)
_SKIPPED = RunStatus.skipped.value
_SCHEDULED = Trigger.scheduled.value

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
    late: bool = False
    """It starts long after its due (its claim was held up): marked late, whatever was decided."""


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


def write_deletes(param: str, ids: Sequence[int], cursor: Any) -> int:
    """Delete the runs ``ids`` unless they run; how many."""
    marks = codec.marks(param, len(ids))
    cursor.execute(f"DELETE FROM runs WHERE id IN ({marks}) AND status != '{codec.RUNNING}'", ids)
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
        f"SELECT 1 FROM runs WHERE schedule_id = {p} AND status = '{codec.RUNNING}' "
        f"AND machine IS NOT NULL AND machine <> {p} LIMIT 1"
    )
    insert, skipped = _insert(p), _insert_skipped(p)
    who = _Who.of(holder)
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
        if claim.skipped:
            _many(cursor, p, skipped, who.skipped_rows(claim))
        taken = (
            claim.status is RunStatus.running
            and claim.exclusive
            and cursor.execute(elsewhere, (sid, who.machine)).fetchone() is not None
        )
        cursor.execute(insert + " RETURNING id", who.fire_row(claim, taken))
        run_id = int(cursor.fetchone()[0])
        ids.append(run_id)
        if taken and busy is not None:
            busy.add(run_id)
    return ids


class Together:
    """``write_claims`` with ``gone_is_lost``, for SQLite, in a few statements per 100 claims, not
    three a claim; its rows are encoded when it is made, before the write lock is taken (a wake's
    100,000 skipped instants are Python's work).

    ``executemany`` would give the GIL back and take it again for every row, and each time it
    is taken back from a busy GUI thread the recorder waited: a wake's 70,000 rows took twice as
    long in the app as alone. Here each statement reads its rows from one JSON document.

    ``BEGIN IMMEDIATE`` took the file's write lock: until the commit nothing else moves a
    ``last_due`` or adds a run, so the compare-and-set is a read of the claimed schedules and
    one update of the winners, and the fire rows, inserted after the skipped ones of their
    claims, are the newest ids of ``runs`` (AUTOINCREMENT: each larger than every id before)."""

    def __init__(self, claims: Sequence[FireClaim], holder: Holder) -> None:
        who = _Who.of(holder)
        self._who = who
        self._claims = claims
        self._skipped = [_skipped_json(claim) for claim in claims]
        self._fires = [json.dumps(who.fire_row(claim, False)) for claim in claims]
        self._moves = [f"[{claim.schedule_id},{codec.to_micros(claim.due)}]" for claim in claims]
        self._expected = [
            None if claim.expected_last_due is None else codec.to_micros(claim.expected_last_due)
            for claim in claims
        ]

    @staticmethod
    def takes(claims: Sequence[FireClaim]) -> bool:
        """Not ``exclusive`` claims (a shared store's), nor two of one schedule."""
        unique = len({claim.schedule_id for claim in claims}) == len(claims)
        return unique and not any(claim.exclusive for claim in claims)

    def write(self, cursor: Any) -> list[int | None]:
        """In the caller's ``BEGIN IMMEDIATE`` transaction: per claim, its fire's id or None."""
        claims = self._claims
        stored: dict[int, int | None] = {}
        ids = [claim.schedule_id for claim in claims]
        for chunk in codec.in_chunks(ids):
            marks = codec.marks("?", len(chunk))
            cursor.execute(f"SELECT id, last_due FROM schedules WHERE id IN ({marks})", chunk)
            stored.update(cursor.fetchall())
        won = [
            index
            for index, claim in enumerate(claims)
            if claim.schedule_id in stored and stored[claim.schedule_id] == self._expected[index]
        ]
        who = self._who
        run_ids: list[int | None] = [None] * len(claims)
        for chunk in codec.in_chunks(won, _CLAIMS_A_STATEMENT):
            cursor.execute(_MOVE_LAST_DUES, (_array(self._moves[index] for index in chunk),))
            skipped = _array(self._skipped[index] for index in chunk if self._skipped[index])
            if skipped != "[]":
                cursor.execute(
                    _SKIPPED_FROM_JSON, (who.pid, who.token, who.started, who.machine, skipped)
                )
            cursor.execute(_FIRES_FROM_JSON, (_array(self._fires[index] for index in chunk),))
            cursor.execute("SELECT id FROM runs ORDER BY id DESC LIMIT ?", (len(chunk),))
            for index, (run_id,) in zip(chunk, reversed(cursor.fetchall()), strict=True):
                run_ids[index] = int(run_id)
        return run_ids


_CLAIMS_A_STATEMENT = 100
"""Claims one statement writes (a wake's 1,000 fires: 70,000 skipped rows in 10 statements)."""
_MOVE_LAST_DUES = (
    "UPDATE schedules SET last_due = json_extract(j.value, '$[1]') FROM json_each(?) AS j "
    "WHERE schedules.id = json_extract(j.value, '$[0]')"
)
"""``[[schedule id, due], ...]``: the winners' compare-and-set, their ``last_due`` moved."""
_SKIPPED_FROM_JSON = (
    "WITH c AS MATERIALIZED (SELECT key AS k, json_extract(value, '$[0]') AS sid, "
    "json_extract(value, '$[1]') AS fired, json_extract(value, '$[2]') AS why, "
    "json_extract(value, '$[3]') AS dues FROM json_each(?5)) "
    f"INSERT INTO runs ({_COLUMNS}) "
    f"SELECT c.sid, '{_SKIPPED}', '{_SCHEDULED}', i.value, c.fired, c.why, FALSE, 0, 0, "
    "?1, ?2, ?3, ?4, NULL FROM c, json_each(c.dues) AS i ORDER BY c.k, i.key"
)
"""``_skipped_json`` of many claims; each claim's fields are read from its JSON once (the
materialized ``c``), not once a row."""
_FIRES_FROM_JSON = (
    f"INSERT INTO runs ({_COLUMNS}) SELECT "
    + ", ".join(f"json_extract(value, '$[{n}]')" for n in range(14))
    + " FROM json_each(?) ORDER BY key"
)
"""``[_Who.fire_row, ...]``: the fires' own rows, in order."""


def _array(items: Iterable[str]) -> str:
    return "[" + ",".join(items) + "]"


def _skipped_json(claim: FireClaim) -> str:
    """``claim``'s skipped instants for ``_SKIPPED_FROM_JSON`` ("" when there are none):
    ``[schedule id, fired at, reason, [due, ...]]``, its numbers microseconds."""
    if not claim.skipped:
        return ""
    dues = ",".join(map(str, codec.to_micros_all(claim.skipped)))
    fired = codec.to_micros(claim.fired_at)
    return f'[{claim.schedule_id},{fired},"{claim.skip_reason.value}",[{dues}]]'


def _insert(param: str) -> str:
    return f"INSERT INTO runs ({_COLUMNS}) VALUES ({codec.marks(param, 14)})"


def _insert_skipped(param: str) -> str:
    """A skipped instant's row: what it does not share with the others of its process is bound."""
    p = param
    return (
        f"INSERT INTO runs ({_COLUMNS}) VALUES ({p}, '{_SKIPPED}', '{_SCHEDULED}', {p}, {p}, "
        f"{p}, FALSE, 0, 0, {p}, {p}, {p}, {p}, NULL)"
    )


@dataclass(frozen=True, slots=True)
class _Who:
    """The process and machine a claim's rows are recorded as written by."""

    pid: int
    token: str
    started: str | None
    machine: str
    holder: Holder

    @classmethod
    def of(cls, holder: Holder) -> _Who:
        owner = identity.this_process()
        return cls(owner.pid, owner.token, owner.started, holder.machine, holder)

    def skipped_rows(self, claim: FireClaim) -> list[tuple[object, ...]]:
        """The rows of ``claim``'s skipped instants, for ``_insert_skipped``."""
        sid, fired = claim.schedule_id, codec.to_micros(claim.fired_at)
        why, pid, token, started = claim.skip_reason.value, self.pid, self.token, self.started
        machine = self.machine
        return [
            (sid, due, fired, why, pid, token, started, machine)
            for due in codec.to_micros_all(claim.skipped)
        ]

    def fire_row(self, claim: FireClaim, taken: bool) -> tuple[object, ...]:
        """``taken``: another machine runs the schedule, the fire is recorded skipped ``busy``."""
        reason = claim.reason.value if isinstance(claim.reason, SkipReason) else claim.reason
        status = claim.status
        if taken:
            status, reason = RunStatus.skipped, SkipReason.busy.value
        lease = self.holder.lease_until(claim.fired_at) if status is RunStatus.running else None
        return (
            claim.schedule_id, status.value, claim.trigger.value, codec.to_micros(claim.due),
            codec.to_micros(claim.fired_at), reason, claim.late, claim.missed_count, 0,
            self.pid, self.token, self.started, self.machine, lease,
        )  # fmt: skip


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
    values = codec.marks(p, 15)
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
        f"log_path = COALESCE({p}, log_path), lease_until = {p}, late = (late OR {p}) "
        f"WHERE id = {p} AND status = '{codec.RUNNING}' AND (machine IS NULL OR machine = {p})"
    )
    done: list[bool] = []
    for start in starts:
        cursor.execute(
            sql,
            (codec.to_micros(start.started_at), start.attempt, start.log_path,
             holder.lease_until(start.started_at), start.late, start.run_id, holder.machine),
        )  # fmt: skip
        done.append(cursor.rowcount == 1)
    return done


def write_finishes(cursor: Any, param: str, finishes: Sequence[Finish]) -> list[bool]:
    """``finish_run`` for each; False where the run had already ended (the first outcome wins)."""
    p = param
    sql = (
        f"UPDATE runs SET status = {p}, finished_at = {p}, exit_code = {p}, reason = {p}, "
        f"output_tail = {p} WHERE id = {p} AND status = '{codec.RUNNING}'"
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
