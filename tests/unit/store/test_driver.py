"""Peewee is loaded without psycopg (30 MB of a tray app's memory) until a PostgreSQL store is
opened; then the same process uses PostgreSQL as if psycopg had been there all along."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.pg import fresh_database

BACKENDS = ("sqlite",)  # the test opens both itself, in a fresh interpreter

SCRIPT = """
import sys
from datetime import datetime, timedelta, timezone
from domi_desktop.model import CommandAction, FireClaim, Trigger
from domi_desktop.store import Store

now = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)
with Store.open(sys.argv[1], now=now) as store:
    store.create_schedule("local", "* * * * *", "UTC", CommandAction(argv=("true",)), now=now)
    print("psycopg loaded with SQLite:", "psycopg" in sys.modules)
with Store.open(sys.argv[1], now=now, url=sys.argv[2]) as store:
    schedule = store.create_schedule(
        "shared", "* * * * *", "UTC", CommandAction(argv=("true",)), now=now
    )
    claim = FireClaim(schedule.id, expected_last_due=schedule.last_due,
                      due=now + timedelta(minutes=1), fired_at=now, trigger=Trigger.scheduled)
    first, second = store.claim_fire(claim), store.claim_fire(claim)
    print("PostgreSQL claims:", first is not None, second)
    store.writer().close()  # the hot path's own connection
import peewee
from psycopg.pq import TransactionStatus
# What peewee's own import would have set (connection checks after an error use them).
adapter = peewee.Psycopg3Adapter
print("adapter:", (adapter.txn_idle, adapter.txn_inerror, adapter.txn_unknown) == (
    TransactionStatus.IDLE, TransactionStatus.INERROR, TransactionStatus.UNKNOWN))
"""


def test_sqlite_loads_no_postgresql_driver_and_postgresql_works_after_it(
    tmp_path: Path, postgresql_dsn: str
) -> None:
    with fresh_database(postgresql_dsn, "driver_later") as url:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path / "data"), url],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "psycopg loaded with SQLite: False",
        "PostgreSQL claims: True None",
        "adapter: True",
    ]
