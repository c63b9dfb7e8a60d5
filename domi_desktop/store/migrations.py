"""Numbered schema migrations: each one atomic, a backup copy of the file made before the first.

Version 0 is an empty file. A new database runs every migration from 1, so a fresh install and an
upgraded one end with the same schema by construction. Never edit a released migration: add one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from domi_desktop.errors import StoreError
from domi_desktop.store.models import database, execute
from domi_desktop.store.paths import create_private_file

VERSION_KEY = "schema_version"

_V1 = (
    """CREATE TABLE meta (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE schedules (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        expr TEXT NOT NULL,
        tz TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        action TEXT NOT NULL,
        policies TEXT NOT NULL,
        last_due INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    )""",
    # AUTOINCREMENT: a pruned run's id is never handed out again (log files and links use ids).
    """CREATE TABLE runs (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        due INTEGER,
        fired_at INTEGER,
        started_at INTEGER,
        finished_at INTEGER,
        status TEXT NOT NULL,
        reason TEXT,
        "trigger" TEXT NOT NULL,
        late INTEGER NOT NULL DEFAULT 0,
        missed_count INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER,
        output_tail TEXT,
        log_path TEXT,
        resumed_from INTEGER REFERENCES runs (id) ON DELETE SET NULL
    )""",
    "CREATE INDEX runs_schedule_newest ON runs (schedule_id, id DESC)",
)

_V2 = (
    "ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0",
    # Who wrote a running run, so a later start can tell a dead owner from a live one.
    "ALTER TABLE runs ADD COLUMN owner_pid INTEGER",
    "ALTER TABLE runs ADD COLUMN owner_token TEXT",
    "ALTER TABLE runs ADD COLUMN owner_started TEXT",
    "CREATE INDEX runs_status ON runs (status)",
    # Deleting a run sets its resumed children's link to NULL: without this each delete scans.
    "CREATE INDEX runs_resumed_from ON runs (resumed_from)",
    # Pruning by age.
    "CREATE INDEX runs_fired_at ON runs (fired_at)",
)

_V3 = (
    # The job's process: after the app dies, its next start stops what is left of the job before
    # re-running it. The start marker tells the job from a later process given the same pid.
    "ALTER TABLE runs ADD COLUMN job_pid INTEGER",
    "ALTER TABLE runs ADD COLUMN job_started TEXT",
)

MIGRATIONS: tuple[Sequence[str], ...] = (_V1, _V2, _V3)
"""``MIGRATIONS[n - 1]`` takes a database from version ``n - 1`` to ``n``."""

HEAD = len(MIGRATIONS)


def read_version(path: Path) -> int:
    """The schema version on disk; refuses an SQLite file that is not ours."""
    tables = {row[0] for row in execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return 0
    if "meta" not in tables:
        raise StoreError(
            f"{path} is an SQLite database but not a domi-desktop one (it has no meta table); "
            "it was left untouched"
        )
    row = execute("SELECT value FROM meta WHERE key = ?", (VERSION_KEY,)).fetchone()
    if row is None or not str(row[0]).isdigit():
        raise StoreError(f"{path} has no readable schema version; it was left untouched")
    return int(row[0])


def refuse_newer(version: int, path: Path) -> None:
    if version > HEAD:
        raise StoreError(
            f"{path} was made by a newer domi-desktop (schema version {version}; this one knows "
            f"up to {HEAD}). Update domi-desktop or use another --data-dir; the file is unchanged"
        )


def migrate(path: Path) -> Path | None:
    """Bring the database to ``HEAD``; returns the backup made first, if a migration ran on data.

    Each step is one ``BEGIN IMMEDIATE`` transaction that re-reads the version, so two processes
    opening an old file at once migrate it once. The backup is taken inside the first step, while
    we hold the write lock, so it is exactly the state the migration starts from.
    """
    backup: Path | None = None
    found: int | None = None
    for target, statements in enumerate(MIGRATIONS, start=1):
        with database.atomic("IMMEDIATE"):
            version = read_version(path)
            refuse_newer(version, path)
            if found is None:
                found = version
            if version >= target:
                continue
            # A new (empty) file has nothing worth a copy.
            if backup is None and found > 0:
                backup = _backup(path, version)
            for statement in statements:
                execute(statement)
            execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (VERSION_KEY, str(target))
            )
    return backup


def _backup(path: Path, version: int) -> Path:
    """Copy the database with SQLite's backup API (it includes what is still in the WAL).

    Never overwrites an earlier backup: it may be the only copy of an older release's data.
    """
    target = path.with_name(f"{path.name}.v{version}.bak")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.v{version}.{n}.bak")
    create_private_file(target)
    # A second connection: it reads the last committed state, which our write lock keeps current.
    with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(target)) as copy:
        source.backup(copy)
    return target
