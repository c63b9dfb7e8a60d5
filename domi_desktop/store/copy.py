"""``domi-desktop store migrate``: a whole store copied into another (SQLite file ↔ PostgreSQL).

Only one store is open per process (the models share one ``DatabaseProxy``), so a copy is read in
full from the source, which is closed, then written into the target in one transaction: a target
is either the complete copy or unchanged. Ids are kept (run logs and resumed runs refer to them),
and PostgreSQL's identity sequences are moved past them so new rows do not collide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from peewee import BooleanField, Database, Model

from domi_desktop.errors import StoreError
from domi_desktop.store import backend, claims, codec
from domi_desktop.store.models import RunRow, ScheduleRow

_TABLES: tuple[type[Model], ...] = (ScheduleRow, RunRow)
"""In foreign-key order: schedules before the runs that point at them."""
SPANS = "machine_spans"
_SPAN_COLUMNS = "machine, kind, started_at, ended_at, source, is_open"
"""The machine's story (version 7), copied without its ids: a target where an app already ran
keeps its own spans beside the copy's, and no sequence needs moving."""
PAUSES = "pauses"
_PAUSE_COLUMNS = "machine, started_at, ended_at"
""""Pause all" on record (version 8), copied as the spans are: without ids."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every row of every table, by table name, in id order; columns as the models name them."""

    rows: dict[str, list[tuple[Any, ...]]]

    @property
    def schedules(self) -> int:
        return len(self.rows[ScheduleRow._meta.table_name])

    @property
    def runs(self) -> int:
        return len(self.rows[RunRow._meta.table_name])


def _columns(model: type[Model]) -> list[str]:
    return [field.column_name for field in model._meta.sorted_fields]


def _quoted(model: type[Model]) -> str:
    return ", ".join(f'"{name}"' for name in _columns(model))


def dump(db: Database) -> Snapshot:
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for model in _TABLES:
        table = model._meta.table_name
        cursor = db.execute_sql(f"SELECT {_quoted(model)} FROM {table} ORDER BY id")  # type: ignore[no-untyped-call]
        rows[table] = [tuple(row) for row in cursor.fetchall()]
    cursor = db.execute_sql(f"SELECT {_SPAN_COLUMNS} FROM {SPANS} ORDER BY id")  # type: ignore[no-untyped-call]
    rows[SPANS] = [(*row[:5], bool(row[5])) for row in cursor.fetchall()]
    cursor = db.execute_sql(f"SELECT {_PAUSE_COLUMNS} FROM {PAUSES} ORDER BY id")  # type: ignore[no-untyped-call]
    rows[PAUSES] = [tuple(row) for row in cursor.fetchall()]
    return Snapshot(rows)


def load(db: Database, snapshot: Snapshot, *, replace: bool, label: str) -> None:
    """Write ``snapshot`` into ``db`` in one transaction. A target that holds schedules or runs
    is refused unless ``replace``, which deletes them first."""
    with claims.write_transaction(db) as cursor:
        if backend.is_postgresql(db):
            # A copy is one long transaction on purpose: Python prepares a table's rows between
            # two statements, which may take longer than the server lets a frozen session sit.
            cursor.execute("SET LOCAL idle_in_transaction_session_timeout = 0")
        held = [_count(cursor, model) for model in _TABLES]
        if any(held) and not replace:
            raise StoreError(
                f"{label} already holds {held[0]} schedules and {held[1]} runs; nothing was "
                "copied. Use --force to replace them"
            )
        # Runs first: the foreign key of runs on schedules.
        if replace:
            cursor.execute(f"DELETE FROM {SPANS}")
            cursor.execute(f"DELETE FROM {PAUSES}")
        for model in reversed(_TABLES):
            cursor.execute(f"DELETE FROM {model._meta.table_name}")
        for model in _TABLES:
            _insert(cursor, db, model, snapshot.rows[model._meta.table_name])
            if backend.is_postgresql(db):
                table = model._meta.table_name
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM {table}"
                )
        spans = snapshot.rows.get(SPANS, [])
        if spans:
            marks = codec.marks(db.param, 6)
            cursor.executemany(f"INSERT INTO {SPANS} ({_SPAN_COLUMNS}) VALUES ({marks})", spans)
        paused = snapshot.rows.get(PAUSES, [])
        if paused:
            marks = codec.marks(db.param, 3)
            cursor.executemany(f"INSERT INTO {PAUSES} ({_PAUSE_COLUMNS}) VALUES ({marks})", paused)


def _count(cursor: Any, model: type[Model]) -> int:
    cursor.execute(f"SELECT COUNT(*) FROM {model._meta.table_name}")
    return int(cursor.fetchone()[0])


def _insert(cursor: Any, db: Database, model: type[Model], rows: Sequence[tuple[Any, ...]]) -> None:
    if not rows:
        return
    fields = model._meta.sorted_fields
    flags = [isinstance(field, BooleanField) for field in fields]
    # SQLite keeps booleans as 0/1; PostgreSQL's BOOLEAN takes no integer.
    values = [
        tuple(bool(v) if flag and v is not None else v for v, flag in zip(row, flags, strict=True))
        for row in rows
    ]
    marks = codec.marks(db.param, len(fields))
    table = model._meta.table_name
    cursor.executemany(f"INSERT INTO {table} ({_quoted(model)}) VALUES ({marks})", values)
