"""Fixtures shared by every test directory.

postgresql_dsn   (session) a DSN for psycopg 3 to a throw-away PostgreSQL server on a Unix
                 socket (tests/pg.py); skipped only when the server binaries are not installed
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import pg


@pytest.fixture(scope="session")
def postgresql_dsn() -> Iterator[str]:
    bin_dir = pg.find_bin_dir()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); "
            "install the Debian package `postgresql`"
        )
    with pg.running_server(bin_dir) as server:
        print(f"PostgreSQL {bin_dir.parent.name} started in {server.start_seconds:.2f} s")
        yield server.dsn
