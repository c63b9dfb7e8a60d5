"""The throw-away PostgreSQL server of tests/support/pg.py answers psycopg 3 on its Unix socket."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.support import pg

pytestmark = pytest.mark.linux_only  # the throw-away server is Debian's PostgreSQL


def test_it_answers_select_1(postgresql_dsn: str) -> None:
    with psycopg.connect(postgresql_dsn, connect_timeout=5) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        # Only the socket: the server must not be reachable over the network.
        assert conn.execute("show listen_addresses").fetchone() == ("",)


def test_it_is_writable(postgresql_dsn: str) -> None:
    with psycopg.connect(postgresql_dsn, connect_timeout=5) as conn:
        conn.execute("create temporary table t (x int)")
        conn.execute("insert into t values (41), (1)")
        assert conn.execute("select sum(x) from t").fetchone() == (42,)


def test_it_names_what_is_missing_without_binaries(tmp_path: Path) -> None:
    with pytest.raises(pg.PostgresError, match="initdb failed"), pg.running_server(tmp_path):
        pass
