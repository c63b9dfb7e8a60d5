"""Fixtures shared by every test directory.

postgresql_dsn   (session) a DSN for psycopg 3 to a throw-away PostgreSQL server on a Unix
                 socket (tests/pg.py); skipped only when the server binaries are not installed
local_is_the_os_zone   (autouse) ``local`` resolves to the OS zone, as the entry points make it
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.platform.timezone import install_os_zone
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


@pytest.fixture(autouse=True)
def local_is_the_os_zone() -> Iterator[None]:
    """``local`` is the OS zone in every test, as the entry points make it; a test may install
    another resolver over it."""
    install_os_zone()
    yield
    set_local_resolver(None)
