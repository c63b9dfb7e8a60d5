"""The schedule-change counter the database keeps (schema version 5; the notes counted since 6):
every insert, delete and edit of a schedule moves it, whoever writes; a write of ``last_due`` alone
(a claim, the clock set back) does not, so the app's own claims and results never look like
another process's edit."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.clock import SystemClock
from domi_desktop.errors import NotFoundError
from domi_desktop.frontdoor.service import Service
from domi_desktop.model import (
    CatchUp,
    CommandAction,
    FireClaim,
    HttpAction,
    Policies,
    RunStatus,
    Schedule,
)
from domi_desktop.store import Store, migrations
from domi_desktop.store.claims import Finish, Start
from tests.support.pg import fresh_database

Sql = Callable[..., list[tuple[object, ...]]]
Spawn = Callable[..., subprocess.Popen[str]]
MINUTE = timedelta(minutes=1)

EDITS: dict[str, dict[str, Any]] = {
    "name": {"name": "renamed"},
    "expr": {"expr": "30 9 * * *"},
    "tz": {"tz": "UTC"},
    "enabled": {"enabled": False},
    "action": {"action": HttpAction(url="https://example.org/")},
    "policies": {"policies": Policies(catch_up=CatchUp.skip)},
    "notes": {"notes": "why this job exists"},
}


def test_a_new_store_counts_from_zero_and_a_schedule_created_counts(
    store: Store, now: datetime
) -> None:
    assert store.change_counter() == 0
    store.create_schedule("x", "* * * * *", "UTC", CommandAction(argv=("true",)), now=now)
    assert store.change_counter() == 1


@pytest.mark.parametrize("field", sorted(EDITS))
def test_every_kind_of_edit_moves_the_counter(
    store: Store, schedule: Schedule, now: datetime, field: str
) -> None:
    before = store.change_counter()
    store.update_schedule(schedule.id, now=now + MINUTE, **EDITS[field])
    assert store.change_counter() == before + 1


def test_deleting_a_schedule_moves_the_counter_and_a_refused_delete_does_not(
    store: Store, schedule: Schedule
) -> None:
    before = store.change_counter()
    store.delete_schedule(schedule.id)
    assert store.change_counter() == before + 1
    with pytest.raises(NotFoundError, match="no schedule"):
        store.delete_schedule(schedule.id)
    assert store.change_counter() == before + 1


def test_an_import_moves_the_counter(store: Store, schedule: Schedule) -> None:
    service = Service(store, SystemClock())
    document = service.export({})
    before = store.change_counter()
    assert len(service.import_({"document": document})["created"]) == 1
    assert store.change_counter() > before


def test_claims_through_the_store_and_its_writer_do_not_move_the_counter(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    assert schedule.last_due == now
    before, elsewhere = store.change_counter(), store.changes_elsewhere()
    first = store.claim_fire(FireClaim(schedule.id, now, now + MINUTE, now + MINUTE))
    assert first is not None
    writer = store.writer()
    try:
        (second,), _ = writer.claim([FireClaim(schedule.id, now + MINUTE, now + 2 * MINUTE, now)])
        assert second is not None
        assert writer.start([Start(second, now + 2 * MINUTE, None)]) == [True]
        assert writer.finish([Finish(second, RunStatus.succeeded, now + 3 * MINUTE, 0)]) == [True]
    finally:
        writer.close()
    store.finish_run(first, status=RunStatus.failed, finished_at=now + 3 * MINUTE, exit_code=1)
    assert store.get_schedule(schedule.id).last_due == now + 2 * MINUTE
    assert store.change_counter() == before
    assert store.changes_elsewhere() == elsewhere


def test_setting_last_due_back_does_not_move_the_counter(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    before = store.change_counter()
    assert store.rebase_last_due(schedule.id, now, now - MINUTE)
    assert store.get_schedule(schedule.id).last_due == now - MINUTE
    assert store.change_counter() == before


def test_this_stores_own_edits_are_not_changes_elsewhere(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    counted, elsewhere = store.change_counter(), store.changes_elsewhere()
    store.update_schedule(schedule.id, now=now, name="mine")
    store.delete_schedule(schedule.id)
    assert store.change_counter() == counted + 2
    assert store.changes_elsewhere() == elsewhere


def test_another_connections_edits_move_the_counter_and_its_last_due_writes_do_not(
    store: Store, schedule: Schedule, sql: Sql
) -> None:
    elsewhere = store.changes_elsewhere()
    sql("UPDATE schedules SET last_due = last_due - 60000000 WHERE id = ?", schedule.id)
    assert store.changes_elsewhere() == elsewhere
    sql("UPDATE schedules SET enabled = ? WHERE id = ?", False, schedule.id)
    assert store.changes_elsewhere() == elsewhere + 1
    sql("DELETE FROM schedules WHERE id = ?", schedule.id)
    assert store.changes_elsewhere() == elsewhere + 2


def test_another_stores_edit_is_seen_by_this_stores_counter(
    store: Store, schedule: Schedule, data_dir: Path, spawn: Spawn
) -> None:
    counted, elsewhere = store.change_counter(), store.changes_elsewhere()
    worker = spawn("rename", data_dir, schedule.id, "from another process")
    out, err = worker.communicate(timeout=30)
    assert (worker.returncode, out.strip()) == (0, "renamed"), err
    assert store.get_schedule(schedule.id).name == "from another process"
    assert store.change_counter() == counted + 1
    assert store.changes_elsewhere() == elsewhere + 1


def test_a_v4_postgresql_database_gains_the_change_counter_with_its_schedules_intact(
    postgresql_dsn: str, tmp_path: Path, now: datetime
) -> None:
    import psycopg

    with fresh_database(postgresql_dsn, "counter_from_v4") as url:
        with psycopg.connect(url, autocommit=True) as db:
            for step in migrations.POSTGRESQL_MIGRATIONS[:4]:
                for statement in step:
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema_version', '4')")
            db.execute(
                "INSERT INTO schedules (name, expr, tz, action, policies, last_due, created_at, "
                "updated_at) VALUES ('old', '0 9 * * *', 'UTC', %s, '{\"v\": 1}', 1, 1, 1)",
                ('{"argv": ["true"], "kind": "command", "v": 1}',),
            )
        with Store.open(tmp_path, now=now, url=url) as store:
            assert store.schema_version == migrations.HEAD == 8
            [old] = store.list_schedules()
            assert (old.name, old.action, old.last_due) == (
                "old",
                CommandAction(argv=("true",)),
                datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            )
            assert store.change_counter() == 0
            assert store.rebase_last_due(old.id, old.last_due, datetime(1970, 1, 1, tzinfo=UTC))
            assert store.change_counter() == 0
            with psycopg.connect(url, autocommit=True) as other:
                other.execute("UPDATE schedules SET expr = '0 10 * * *'")
            assert store.change_counter() == store.changes_elsewhere() == 1


def test_a_v5_postgresql_database_gains_notes_and_counts_their_edits(
    postgresql_dsn: str, tmp_path: Path, now: datetime
) -> None:
    import psycopg

    with fresh_database(postgresql_dsn, "notes_from_v5") as url:
        with psycopg.connect(url, autocommit=True) as db:
            for step in migrations.POSTGRESQL_MIGRATIONS[:5]:
                for statement in step:
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('schema_version', '5')")
            db.execute(
                "INSERT INTO schedules (name, expr, tz, action, policies, last_due, created_at, "
                "updated_at) VALUES ('old', '0 9 * * *', 'UTC', %s, '{\"v\": 1}', 1, 1, 1)",
                ('{"argv": ["true"], "kind": "command", "v": 1}',),
            )
        with Store.open(tmp_path, now=now, url=url) as store:
            assert store.schema_version == migrations.HEAD == 8
            [old] = store.list_schedules()
            assert (old.name, old.action, old.notes) == ("old", CommandAction(argv=("true",)), "")
            counted = store.change_counter()
            with psycopg.connect(url, autocommit=True) as other:
                other.execute("UPDATE schedules SET notes = 'call Ana'")
            assert store.change_counter() == store.changes_elsewhere() == counted + 1
            assert store.get_schedule(old.id).notes == "call Ana"


def test_the_schedule_count_follows_this_stores_and_another_connections_writes(
    store: Store, schedule: Schedule, sql: Sql, now: datetime
) -> None:
    assert store.count_schedules() == 1
    store.create_schedule("two", "* * * * *", "UTC", CommandAction(argv=("true",)), now=now)
    assert store.count_schedules() == 2
    sql("DELETE FROM schedules WHERE id = ?", schedule.id)
    assert store.count_schedules() == 1
    sql(
        "INSERT INTO schedules (name, expr, tz, enabled, action, policies, created_at, updated_at)"
        " SELECT 'copy', expr, tz, enabled, action, policies, created_at, updated_at"
        " FROM schedules"
    )
    assert store.count_schedules() == 2
    sql("UPDATE schedules SET last_due = 0")  # not an edit: the count is not read again
    assert store.count_schedules() == 2


def test_the_count_does_not_wait_and_answers_the_last_one_while_another_thread_reads(
    store: Store, schedule: Schedule, sql: Sql
) -> None:
    assert store.count_schedules() == 1
    reading, done = threading.Event(), threading.Event()

    def read_long() -> None:
        with store._using():  # as the recorder's pruning read holds it in a burst
            reading.set()
            done.wait(60)

    reader = threading.Thread(target=read_long)
    reader.start()
    try:
        assert reading.wait(60)
        sql(
            "INSERT INTO schedules (name, expr, tz, enabled, action, policies, created_at,"
            " updated_at) SELECT 'copy', expr, tz, enabled, action, policies, created_at,"
            " updated_at FROM schedules"
        )
        assert store.count_schedules() == 1
    finally:
        done.set()
        reader.join()
    assert store.count_schedules() == 2
