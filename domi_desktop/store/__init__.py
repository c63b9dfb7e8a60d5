"""Schedules and runs in one SQLite file through Peewee; only plain dataclasses leave here.

Peewee loads with this package (without psycopg until a PostgreSQL store is opened: ``_driver``).
Where the data lives is ``domi_desktop.paths`` (re-exported here), a floor below:
``domi-desktop status`` does not import this package at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domi_desktop.paths import DATA_DIR_ENV, DB_FILENAME, resolve_data_dir
from domi_desktop.store import _driver  # noqa: F401  (first: Peewee without psycopg)

if TYPE_CHECKING:
    from domi_desktop.store.store import Store

__all__ = ["DATA_DIR_ENV", "DB_FILENAME", "SCHEMA_VERSION", "Store", "resolve_data_dir"]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from domi_desktop.store.store import Store

        return Store
    if name == "SCHEMA_VERSION":
        from domi_desktop.store.migrations import HEAD

        return HEAD
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
