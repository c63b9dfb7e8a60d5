"""Which database a store lives in: the embedded SQLite file (the default) or a shared PostgreSQL.

``--store postgresql://…`` (or ``DOMI_STORE``) names a PostgreSQL database that several machines
share; anything else keeps the SQLite file in the data dir, so ``make run`` needs no server.

The driver is psycopg 3 (``psycopg[binary]``): Peewee 4 speaks it natively (``prefer_psycopg3``),
its binary wheel bundles libpq for Linux, macOS and Windows (no client library to install), it has
``LISTEN/NOTIFY`` as a generator on a plain connection (``Connection.notifies``), and psycopg2 is
in maintenance only. It is imported only when a PostgreSQL store is opened.

Each machine has a name (``--machine``, ``DOMI_MACHINE``, else the host name): it is written on
the runs it claims, says where a schedule may run, and tells a run of this machine (whose process
liveness can be checked) from one of another machine (whose lease must be waited out).
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from peewee import Database, PostgresqlDatabase, SqliteDatabase

from domi_desktop.errors import StoreError
from domi_desktop.store import _driver

STORE_ENV = "DOMI_STORE"
MACHINE_ENV = "DOMI_MACHINE"
CONNECT_TIMEOUT = 5
"""Seconds to reach the PostgreSQL server before the open fails with a message."""
IDLE_IN_TRANSACTION = 5.0
"""Seconds the server lets a session of ours sit in a transaction between two statements before
it ends the session (``idle_in_transaction_session_timeout``). Our transactions take
milliseconds; one stays open that long only when its machine froze inside it (a laptop's lid
closed, a stopped process), and meanwhile its row locks stopped every other machine's claims and
lease checks. The frozen machine opens a new session when it is back (``revive``)."""
_SCHEMES = ("postgresql", "postgres")
MAX_MACHINE_NAME = 64


@dataclass(frozen=True, slots=True)
class Target:
    """Where a store is: ``url`` for PostgreSQL, else the SQLite file ``path``."""

    url: str | None
    path: Path

    @property
    def shared(self) -> bool:
        return self.url is not None

    @property
    def label(self) -> str:
        """For messages: the file, or the URL without its password."""
        return hide_password(self.url) if self.url is not None else str(self.path)


def resolve_url(explicit: str | None = None) -> str | None:
    """``--store`` if given, else ``$DOMI_STORE``; None (or ``sqlite``) is the embedded file."""
    value = explicit if explicit is not None else os.environ.get(STORE_ENV, "")
    value = value.strip()
    if not value or value.lower() == "sqlite":
        return None
    try:
        scheme = urlsplit(value).scheme.lower()
    except ValueError as error:  # an unclosed [ of an IPv6 host; the URL may hold a password
        raise StoreError(f"--store: not a URL ({error}): expected a postgresql://… URL") from None
    if scheme not in _SCHEMES:
        raise StoreError(
            f"--store {hide_password(value)!r}: expected a postgresql://… URL, or sqlite for the "
            "file in the data dir"
        )
    return value


def hide_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def machine_name(explicit: str | None = None) -> str:
    """``--machine`` if given, else ``$DOMI_MACHINE``, else the host name (short form)."""
    value = (explicit or os.environ.get(MACHINE_ENV) or "").strip()
    if not value:
        value = socket.gethostname().split(".", 1)[0] or "localhost"
    check_machine_name(value, "machine name")
    return value


def check_machine_name(value: str, where: str) -> None:
    if (
        not value
        or len(value) > MAX_MACHINE_NAME
        or not value.isprintable()
        or value != value.strip()
    ):
        raise StoreError(
            f"{where} {value!r}: expected 1 to {MAX_MACHINE_NAME} printable characters, "
            "without surrounding spaces"
        )


def postgresql(url: str) -> PostgresqlDatabase:
    """A Peewee database on psycopg 3, in autocommit: the store begins its own transactions."""
    try:
        _driver.with_psycopg()  # fails here, with a message, rather than at connect
    except ImportError as exc:
        raise StoreError(
            "--store postgresql://… needs psycopg 3: pip install 'psycopg[binary]'"
        ) from exc
    return PostgresqlDatabase(
        url,
        prefer_psycopg3=True,
        autoconnect=False,
        thread_safe=False,
        connect_timeout=CONNECT_TIMEOUT,
        application_name="domi-desktop",
        options=f"-c idle_in_transaction_session_timeout={round(IDLE_IN_TRANSACTION * 1000)}",
    )


def revive(db: Database) -> None:
    """Open ``db`` afresh if it is a PostgreSQL connection the server has ended (a session ended
    while its machine froze in a transaction, a restarted server, a dropped link): the use that
    found it broken failed; the next one works again. Nothing for SQLite or an open link."""
    if not is_postgresql(db):
        return
    if db.is_closed():
        # A reconnect tried while the server was still down leaves the link closed: the next use
        # opens it again, or every use after an outage would fail for good.
        db.connect()
        return
    connection = db.connection()  # type: ignore[no-untyped-call]
    if connection.closed or connection.broken:
        db.close()
        db.connect()


def is_postgresql(db: Database | Any) -> bool:
    return isinstance(db, PostgresqlDatabase)


def is_sqlite(db: Database | Any) -> bool:
    return isinstance(db, SqliteDatabase)


def driver_errors() -> tuple[type[BaseException], ...]:
    """psycopg's error base, if it is loaded: raw cursors of the hot path raise it unwrapped."""
    psycopg = sys.modules.get("psycopg")
    return (psycopg.Error,) if psycopg is not None else ()


LEASE = 60.0
"""Seconds a machine holds a running run without renewing it; ``Runtime`` renews every third of
it, so a vanished machine's run is taken over at most ``LEASE`` plus one check period later."""
LEASE_ENV = "DOMI_LEASE"


def lease_seconds() -> float:
    """``$DOMI_LEASE`` (seconds, for tests and unusual networks), else ``LEASE``."""
    raw = os.environ.get(LEASE_ENV, "").strip()
    if not raw:
        return LEASE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 1.0 <= value <= 3600.0:
        raise StoreError(f"{LEASE_ENV}={raw!r}: expected seconds between 1 and 3600")
    return value
