"""Schedules and runs in one SQLite file through Peewee; only plain dataclasses leave here."""

from __future__ import annotations

from domi_desktop.store.migrations import HEAD as SCHEMA_VERSION
from domi_desktop.store.paths import DATA_DIR_ENV, DB_FILENAME, resolve_data_dir
from domi_desktop.store.store import Store

__all__ = [
    "DATA_DIR_ENV",
    "DB_FILENAME",
    "SCHEMA_VERSION",
    "Store",
    "resolve_data_dir",
]
