"""The store's fixtures. Every test that uses ``data_dir`` runs twice, on SQLite and on a fresh
PostgreSQL database of the throw-away server (``postgresql_dsn``): one test body, two backends
(the APScheduler habit). The PostgreSQL run sets ``DOMI_STORE`` so that every ``Store.open`` of
the test, and of the worker processes it spawns, lands in that database. A module that is about
SQLite files only (opening, file migrations) says so with ``BACKENDS = ("sqlite",)``.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.model import CommandAction, Schedule
from domi_desktop.store import Store
from domi_desktop.store.backend import STORE_ENV
from tests.support.pg import fresh_database

BACKENDS = ("sqlite", "postgresql")
_databases = itertools.count(1)

WORKER = Path(__file__).with_name("store_worker.py")
NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)

# Schema version 1 as released, frozen here on purpose: the store's own migration code must not be
# what builds the "old" database, or an edit to migration 1 would go unnoticed.
V1_DDL = (
    "CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE schedules (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, expr TEXT NOT NULL,
        tz TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, action TEXT NOT NULL,
        policies TEXT NOT NULL, last_due INTEGER, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL)""",
    """CREATE TABLE runs (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        due INTEGER, fired_at INTEGER, started_at INTEGER, finished_at INTEGER,
        status TEXT NOT NULL, reason TEXT, "trigger" TEXT NOT NULL,
        late INTEGER NOT NULL DEFAULT 0, missed_count INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER, output_tail TEXT, log_path TEXT,
        resumed_from INTEGER REFERENCES runs (id) ON DELETE SET NULL)""",
    "CREATE INDEX runs_schedule_newest ON runs (schedule_id, id DESC)",
    "INSERT INTO meta VALUES ('schema_version', '1')",
)

# 2026-03-01T09:00:00Z and friends, in microseconds since the epoch.
V1_DUE = 1_772_355_600_000_000
V1_MINUTE = 60_000_000
V1_ROWS = (
    """INSERT INTO schedules VALUES (1, 'login report', '0 9 * * *', 'Europe/Berlin', 1,
        '{"argv": ["report", "--endpoint", "login"], "cwd": null, "env": [["LANG", "C"]],
          "kind": "command", "secret_env": [["API_TOKEN", "rate-limit-token"]], "shell": null,
          "stdin": null, "v": 1}',
        '{"catch_up": "latest", "catch_up_within": 43200.0, "concurrency_key": null,
          "jitter": 0.0, "overlap": "queue", "retries": 2, "retry_backoff": 30.0,
          "timeout": 600.0, "v": 1}',
        1772355600000000, 1772000000000000, 1772100000000000)""",
    """INSERT INTO schedules VALUES (2, 'ping', '*/5 * * * *', 'local', 0,
        '{"body": null, "headers": [], "kind": "http", "method": "HEAD",
          "secret_headers": [["Authorization", "ping-token"]], "timeout": 5.0,
          "url": "https://example.org/health", "v": 1}',
        '{"v": 1}', NULL, 1772000000000000, 1772000000000000)""",
    f"""INSERT INTO runs (schedule_id, due, fired_at, status, reason, "trigger")
        VALUES (1, {V1_DUE - 86_400_000_000}, {V1_DUE}, 'skipped', 'missed', 'scheduled')""",
    f"""INSERT INTO runs (schedule_id, due, fired_at, started_at, finished_at, status, "trigger",
        late, missed_count, exit_code, output_tail, log_path)
        VALUES (1, {V1_DUE}, {V1_DUE + V1_MINUTE}, {V1_DUE + V1_MINUTE}, {V1_DUE + 2 * V1_MINUTE},
        'succeeded', 'catch_up', 1, 1, 0, 'done', '/nowhere/run-2.log')""",
    f"""INSERT INTO runs (schedule_id, fired_at, started_at, status, "trigger")
        VALUES (1, {V1_DUE + 3 * V1_MINUTE}, {V1_DUE + 3 * V1_MINUTE}, 'running', 'manual')""",
)


@pytest.fixture
def now() -> datetime:
    return NOW


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        backends = getattr(metafunc.module, "BACKENDS", BACKENDS)
        # The throw-away PostgreSQL server is Debian's (tests/support/pg.py).
        params = [
            pytest.param(name, marks=pytest.mark.linux_only) if name == "postgresql" else name
            for name in backends
        ]
        metafunc.parametrize("backend", params, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``sqlite`` or ``postgresql``: the store every ``Store.open`` of this test opens."""
    if request.param == "sqlite":
        monkeypatch.delenv(STORE_ENV, raising=False)
        yield request.param
        return
    dsn: str = request.getfixturevalue("postgresql_dsn")
    with fresh_database(dsn, f"store_{next(_databases)}") as url:
        monkeypatch.setenv(STORE_ENV, url)
        yield request.param


@pytest.fixture
def data_dir(tmp_path: Path, backend: str) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    with Store.open(data_dir, now=NOW) as opened:
        yield opened


@pytest.fixture
def schedule(store: Store) -> Schedule:
    return store.create_schedule(
        "login report",
        "0 9 * * *",
        "Europe/Berlin",
        CommandAction(argv=("report", "--endpoint", "login"), secret_env=(("TOKEN", "api"),)),
        now=NOW,
    )


@pytest.fixture
def sql(data_dir: Path, backend: str) -> Iterator[Callable[..., list[tuple[object, ...]]]]:
    """Run SQL on the database through a connection of its own (as another program would), in
    autocommit; ``?`` placeholders on both backends."""
    connections: list[Any] = []

    def run(statement: str, *params: object) -> list[tuple[object, ...]]:
        if not connections:
            connections.append(_connect(data_dir, backend))
        if backend == "sqlite":
            return list(connections[0].execute(statement, params).fetchall())
        cursor = connections[0].execute(statement.replace("?", "%s"), params)
        return list(cursor.fetchall()) if cursor.description else []

    yield run
    for connection in connections:
        connection.close()


def _connect(data_dir: Path, backend: str) -> Any:
    if backend == "sqlite":
        return sqlite3.connect(data_dir / "domi.sqlite3", isolation_level=None)
    import psycopg

    return psycopg.connect(os.environ[STORE_ENV], autocommit=True)


@pytest.fixture
def build_v1_database() -> Callable[[Path], Path]:
    """Write a schema-version-1 database with two schedules and three runs; returns its path."""

    def build(directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "domi.sqlite3"
        with closing(sqlite3.connect(path, isolation_level=None)) as connection:
            for statement in (*V1_DDL, *V1_ROWS):
                connection.execute(statement)
        return path

    return build


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``store_worker.py COMMAND ARGS...``; every worker is ended and reaped at teardown."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: object) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, str(WORKER), *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()
