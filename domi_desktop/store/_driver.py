"""Peewee without psycopg until a PostgreSQL store is opened.

Peewee imports every database driver it can find when it is first imported; psycopg 3 with its
bundled libpq, OpenSSL and asyncio is 30 MB of a tray app's memory (measured: RSS +30.4 MB,
196 modules), though most people keep their schedules in SQLite. The store package imports
Peewee through here first, with psycopg hidden; ``with_psycopg`` gives Peewee what its own
import would have given it (the module and the names taken from it: peewee 4.5's
``Psycopg3Adapter``), once a PostgreSQL store needs them.
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()

if "peewee" not in sys.modules and "psycopg" not in sys.modules:
    sys.modules["psycopg"] = None  # type: ignore[assignment]  # makes ``import psycopg`` fail
    try:
        import peewee
    finally:
        del sys.modules["psycopg"]
else:
    import peewee


def with_psycopg() -> None:
    """Peewee's PostgreSQL adapter with psycopg 3 (ImportError without it)."""
    with _lock:
        if getattr(peewee, "psycopg", None) is not None:
            return
        import psycopg
        from psycopg.pq import TransactionStatus
        from psycopg.types.json import Json, Jsonb

        adapter = peewee.Psycopg3Adapter
        adapter.txn_idle = TransactionStatus.IDLE
        adapter.txn_inerror = TransactionStatus.INERROR
        adapter.txn_unknown = TransactionStatus.UNKNOWN
        peewee.TransactionStatus = TransactionStatus  # type: ignore[attr-defined]
        peewee.Json_pg3 = Json  # type: ignore[attr-defined]
        peewee.Jsonb_pg3 = Jsonb  # type: ignore[attr-defined]
        peewee.psycopg = psycopg  # type: ignore[attr-defined]
