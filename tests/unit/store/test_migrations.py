from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.errors import StoreError
from domi_desktop.model import (
    PROCESS_DIED,
    CatchUp,
    CommandAction,
    FireClaim,
    HttpAction,
    Overlap,
    Policies,
    RunStatus,
    Schedule,
    Trigger,
)
from domi_desktop.store import DB_FILENAME, SCHEMA_VERSION, Store, migrations
from domi_desktop.store.models import RunRow, ScheduleRow

BuildV1 = Callable[[Path], Path]
BACKENDS = ("sqlite",)
"""Migrations of SQLite files, with their backups; tests/store/test_postgresql.py has PostgreSQL's."""
V1_DUE = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

EXPECTED_SCHEDULES = [
    Schedule(
        id=1,
        name="login report",
        expr="0 9 * * *",
        tz="Europe/Berlin",
        action=CommandAction(
            argv=("report", "--endpoint", "login"),
            env=(("LANG", "C"),),
            secret_env=(("API_TOKEN", "rate-limit-token"),),
        ),
        policies=Policies(
            catch_up=CatchUp.latest,
            catch_up_within=timedelta(hours=12),
            overlap=Overlap.queue,
            retries=2,
            timeout=timedelta(minutes=10),
        ),
        last_due=V1_DUE,
        created_at=datetime(2026, 2, 25, 6, 13, 20, tzinfo=UTC),
        updated_at=datetime(2026, 2, 26, 10, 0, tzinfo=UTC),
    ),
    Schedule(
        id=2,
        name="ping",
        expr="*/5 * * * *",
        tz="local",
        action=HttpAction(
            url="https://example.org/health",
            method="HEAD",
            secret_headers=(("Authorization", "ping-token"),),
            timeout=5.0,
        ),
        enabled=False,
        last_due=None,
        created_at=datetime(2026, 2, 25, 6, 13, 20, tzinfo=UTC),
        updated_at=datetime(2026, 2, 25, 6, 13, 20, tzinfo=UTC),
    ),
]


def _columns(connection: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    return connection.execute(f"PRAGMA table_info({table})").fetchall()


def _indexes(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def _triggers(connection: sqlite3.Connection) -> dict[str, str]:
    rows = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    return dict(rows.fetchall())


def _version(path: Path) -> str:
    with closing(sqlite3.connect(path)) as connection:
        [(value,)] = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'")
    return str(value)


def test_a_v1_database_migrates_to_head_with_a_backup(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    path = build_v1_database(data_dir)

    with Store.open(data_dir, now=now) as store:
        assert store.schema_version == SCHEMA_VERSION == 8
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v1.bak"
        assert store.list_schedules() == EXPECTED_SCHEDULES
        skipped, fired, left_running = sorted(store.runs(), key=lambda run: run.id)
        assert (skipped.status, skipped.reason, skipped.due) == (
            RunStatus.skipped,
            "missed",
            V1_DUE - timedelta(days=1),
        )
        assert (fired.status, fired.trigger, fired.late, fired.missed_count) == (
            RunStatus.succeeded,
            Trigger.catch_up,
            True,
            1,
        )
        assert (fired.exit_code, fired.output_tail, fired.attempt) == (0, "done", 0)
        assert fired.duration == timedelta(minutes=1)
        # Version 1 recorded no owner: whoever left this running is gone by now.
        [orphan] = store.interrupt_orphans(now)
        assert (orphan.id, orphan.status, orphan.reason) == (
            left_running.id,
            RunStatus.interrupted,
            PROCESS_DIED,
        )
        # The migrated file works like a new one.
        run_id = store.claim_fire(FireClaim(1, expected_last_due=V1_DUE, due=now, fired_at=now))
        assert run_id == 4

    assert _version(path) == "8"
    backup = data_dir / f"{DB_FILENAME}.v1.bak"
    assert _version(backup) == "1"
    with closing(sqlite3.connect(backup)) as connection:
        assert connection.execute("SELECT count(*) FROM runs").fetchone() == (3,)
        assert "attempt" not in {column[1] for column in _columns(connection, "runs")}


def test_the_backup_holds_what_was_still_only_in_the_wal(
    tmp_path: Path, data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    original = build_v1_database(tmp_path / "old")
    with closing(sqlite3.connect(original, isolation_level=None)) as writer:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO schedules SELECT 3, 'late addition', expr, tz, enabled, "
            "action, policies, last_due, created_at, updated_at FROM schedules "
            "WHERE id = 1"
        )
        # Copy the files as a crash would leave them: the new row exists only in the -wal file.
        data_dir.mkdir()
        for suffix in ("", "-wal"):
            shutil.copy(f"{original}{suffix}", data_dir / f"{DB_FILENAME}{suffix}")

    with Store.open(data_dir, now=now) as store:
        assert [s.name for s in store.list_schedules()][-1] == "late addition"
        assert store.migration_backup is not None
        with closing(sqlite3.connect(store.migration_backup)) as backup:
            assert backup.execute("SELECT name FROM schedules WHERE id = 3").fetchone() == (
                "late addition",
            )


def test_opening_a_migrated_database_again_makes_no_new_backup(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    build_v1_database(data_dir)
    Store.open(data_dir, now=now).close()
    with Store.open(data_dir, now=now) as store:
        assert store.migration_backup is None
    assert sorted(p.name for p in data_dir.glob("*.bak")) == [f"{DB_FILENAME}.v1.bak"]


def test_an_earlier_backup_is_never_overwritten(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    build_v1_database(data_dir)
    earlier = data_dir / f"{DB_FILENAME}.v1.bak"
    earlier.write_bytes(b"the only copy of something")
    with Store.open(data_dir, now=now) as store:
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v1.2.bak"
    assert earlier.read_bytes() == b"the only copy of something"


def test_a_new_database_gets_no_backup_and_the_same_schema_as_a_migrated_one(
    tmp_path: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    with Store.open(tmp_path / "new", now=now) as store:
        assert store.migration_backup is None
    build_v1_database(tmp_path / "old")
    Store.open(tmp_path / "old", now=now).close()

    with (
        closing(sqlite3.connect(tmp_path / "new" / DB_FILENAME)) as new,
        closing(sqlite3.connect(tmp_path / "old" / DB_FILENAME)) as old,
    ):
        for table in ("meta", "schedules", "runs", "machine_spans"):
            assert _columns(new, table) == _columns(old, table)
        assert (
            _indexes(new)
            == _indexes(old)
            == {
                "runs_schedule_newest",
                "runs_status",
                "runs_resumed_from",
                "runs_fired_at",
                "runs_resumed_once",
                "machine_spans_ended",
                "machine_spans_age",
                "pauses_started",
            }
        )
        assert _triggers(new) == _triggers(old)
        assert set(_triggers(new)) == {
            "schedules_inserted",
            "schedules_deleted",
            "schedules_updated",
        }
        assert _version(tmp_path / "new" / DB_FILENAME) == str(SCHEMA_VERSION) == "8"
    assert list((tmp_path / "new").glob("*.bak")) == []


def test_the_models_name_exactly_the_columns_on_disk(store: Store) -> None:
    with closing(sqlite3.connect(store.path)) as connection:
        for model in (ScheduleRow, RunRow):
            on_disk = [column[1] for column in _columns(connection, model._meta.table_name)]
            assert on_disk == [field.column_name for field in model._meta.sorted_fields]


def test_a_failing_migration_leaves_the_database_as_it_was(
    data_dir: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(data_dir, now=now).close()
    broken = ("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, broken))
    monkeypatch.setattr(migrations, "HEAD", 9)

    with pytest.raises(StoreError, match="syntax error"):
        Store.open(data_dir, now=now)

    path = data_dir / DB_FILENAME
    assert _version(path) == "8"
    with closing(sqlite3.connect(path)) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables
    assert _version(data_dir / f"{DB_FILENAME}.v8.bak") == "8"


def test_a_v2_database_gains_the_job_process_columns_with_a_backup(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    path = build_v1_database(data_dir)
    with closing(sqlite3.connect(path)) as connection, connection:
        for statement in migrations.MIGRATIONS[1]:
            connection.execute(statement)
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")

    with Store.open(data_dir, now=now) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v2.bak"
        # A run left running by version 2 recorded no job: nothing to stop, still interrupted.
        assert store.orphaned_jobs() == {}
        [orphan] = store.interrupt_orphans(now)
        assert orphan.reason == PROCESS_DIED

    with closing(sqlite3.connect(path)) as connection:
        columns = {column[1] for column in _columns(connection, "runs")}
    assert {"job_pid", "job_started"} <= columns
    assert _version(data_dir / f"{DB_FILENAME}.v2.bak") == "2"


def test_a_v4_database_gains_the_change_counter_with_its_schedules_intact(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    path = build_v1_database(data_dir)
    with closing(sqlite3.connect(path)) as connection, connection:
        for step in migrations.MIGRATIONS[1:4]:
            for statement in step:
                connection.execute(statement)
        connection.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")

    with Store.open(data_dir, now=now) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v4.bak"
        assert store.list_schedules() == EXPECTED_SCHEDULES
        assert store.change_counter() == 0
        assert store.claim_fire(FireClaim(1, expected_last_due=V1_DUE, due=now, fired_at=now))
        assert store.change_counter() == 0
        with closing(sqlite3.connect(path)) as other, other:
            other.execute("UPDATE schedules SET name = 'renamed elsewhere' WHERE id = 2")
        assert store.change_counter() == store.changes_elsewhere() == 1
        store.update_schedule(1, now=now, enabled=False)
        assert (store.change_counter(), store.changes_elsewhere()) == (2, 1)

    assert _version(path) == "8"
    assert _version(data_dir / f"{DB_FILENAME}.v4.bak") == "4"


def test_a_v5_database_gains_empty_notes_with_everything_else_intact_and_counted(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    path = build_v1_database(data_dir)
    with closing(sqlite3.connect(path)) as connection, connection:
        for step in migrations.MIGRATIONS[1:5]:
            for statement in step:
                connection.execute(statement)
        connection.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
        connection.execute("UPDATE meta SET value = '7' WHERE key = 'schedule_changes'")

    with Store.open(data_dir, now=now) as store:
        assert store.schema_version == SCHEMA_VERSION == 8
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v5.bak"
        assert store.list_schedules() == EXPECTED_SCHEDULES
        assert [s.notes for s in store.list_schedules()] == ["", ""]
        assert len(store.runs()) == 3
        # The count goes on from where version 5 left it, and a notes edit is an edit.
        assert store.change_counter() == 7
        with closing(sqlite3.connect(path)) as other, other:
            other.execute("UPDATE schedules SET notes = 'call Ana on failure' WHERE id = 1")
        assert store.changes_elsewhere() == 8
        assert store.get_schedule(1).notes == "call Ana on failure"
        edited = store.update_schedule(2, now=now, notes="owned by ops\nsee wiki")
        assert (edited.notes, edited.name, edited.enabled) == (
            "owned by ops\nsee wiki",
            "ping",
            False,
        )
        assert (store.change_counter(), store.changes_elsewhere()) == (9, 8)

    assert _version(path) == "8"
    with closing(sqlite3.connect(data_dir / f"{DB_FILENAME}.v5.bak")) as backup:
        assert _version(data_dir / f"{DB_FILENAME}.v5.bak") == "5"
        assert "notes" not in {column[1] for column in _columns(backup, "schedules")}


def test_a_v6_database_gains_an_empty_machine_story_with_its_runs_intact(
    data_dir: Path, now: datetime, build_v1_database: BuildV1
) -> None:
    path = build_v1_database(data_dir)
    with closing(sqlite3.connect(path)) as connection, connection:
        for step in migrations.MIGRATIONS[1:6]:
            for statement in step:
                connection.execute(statement)
        connection.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")

    with Store.open(data_dir, now=now, machine="laptop") as store:
        assert store.schema_version == SCHEMA_VERSION == 8
        assert store.migration_backup == data_dir / f"{DB_FILENAME}.v6.bak"
        assert store.list_schedules() == EXPECTED_SCHEDULES
        assert len(store.runs()) == 3
        assert store.machine_spans(now - timedelta(days=400), now) == []

    with closing(sqlite3.connect(data_dir / f"{DB_FILENAME}.v6.bak")) as backup:
        tables = {name for (name,) in backup.execute("SELECT name FROM sqlite_master")}
    assert "machine_spans" not in tables
