"""Schedules and runs in one SQLite file through Peewee; only plain dataclasses leave here.

Peewee loads with ``Store`` only: ``resolve_data_dir`` is all that ``domi-desktop status`` needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domi_desktop.store import _driver  # noqa: F401  (first: Peewee without psycopg)
from domi_desktop.store.paths import DATA_DIR_ENV, DB_FILENAME, resolve_data_dir

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
