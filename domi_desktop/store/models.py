"""Peewee models of the head schema. Private to the store: nothing here leaves the package.

The tables are created by the numbered migrations (``migrations.py``), never by ``create_table``:
the SQL there is what is on disk, including the foreign keys and indexes, and these models only
name the columns for queries. A test checks both agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from peewee import (
    AutoField,
    BooleanField,
    DatabaseProxy,
    IntegerField,
    Model,
    TextField,
)

# Bound by ``Store.open`` to the SQLite file or PostgreSQL database, unbound by ``Store.close``.
database = DatabaseProxy()


class _Base(Model):
    class Meta:
        database = database


class ScheduleRow(_Base):
    id = AutoField()
    name = TextField()
    expr = TextField()
    tz = TextField()
    enabled = BooleanField()
    action = TextField()
    """JSON, see ``codec.encode_action``; secrets appear only by name."""
    policies = TextField()
    last_due = IntegerField(null=True)
    """Microseconds since the epoch (``codec.to_micros``), like every time column."""
    created_at = IntegerField()
    updated_at = IntegerField()
    notes = TextField()
    """The user's free text kept with the schedule; '' for none (version 6)."""

    class Meta:
        table_name = "schedules"


class RunRow(_Base):
    id = AutoField()
    # Plain integers: the foreign keys (cascade, set null) are in the DDL; SQLite enforces them.
    schedule_id = IntegerField()
    due = IntegerField(null=True)
    fired_at = IntegerField(null=True)
    started_at = IntegerField(null=True)
    finished_at = IntegerField(null=True)
    status = TextField()
    reason = TextField(null=True)
    trigger = TextField()
    late = BooleanField()
    missed_count = IntegerField()
    exit_code = IntegerField(null=True)
    output_tail = TextField(null=True)
    log_path = TextField(null=True)
    resumed_from = IntegerField(null=True)
    attempt = IntegerField()
    owner_pid = IntegerField(null=True)
    owner_token = TextField(null=True)
    owner_started = TextField(null=True)
    job_pid = IntegerField(null=True)
    job_started = TextField(null=True)
    """``identity.start_marker`` of ``job_pid``; None if the job was gone before it was read."""
    machine = TextField(null=True)
    """The machine that claimed the run (``backend.machine_name``); None before version 4."""
    lease_until = IntegerField(null=True)
    """Until when the claiming machine holds a running run; renewed while its job runs."""

    class Meta:
        table_name = "runs"


def execute(sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
    # A psycopg cursor on PostgreSQL: the same ``execute``/``fetchone``/``rowcount`` surface.
    """Raw SQL on the bound database (DDL, window queries); typed, unlike peewee's own method."""
    return database.execute_sql(sql, params)  # type: ignore[no-any-return]
