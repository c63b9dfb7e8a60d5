"""Is this file safe to touch? The checks before a database file is opened, and the errors of
SQLite translated into messages that name the file. Nothing here changes a file it refuses."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from peewee import OperationalError as PeeweeOperationalError
from peewee import PeeweeException, SqliteDatabase

from domi_desktop.errors import StoreError, StoreUnavailable
from domi_desktop.paths import PRIVATE_FILE_MODE
from domi_desktop.store import backend, migrations
from domi_desktop.store.models import execute

log = logging.getLogger("domi_desktop.store")

BUSY_TIMEOUT = 5.0
"""Seconds a write waits for another process's transaction before giving up."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100


def was_left_open(path: Path) -> bool:
    """True when the write-ahead log holds something: the last process did not close the file
    cleanly (SQLite removes the log when the last connection closes), or one has it open now."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except FileNotFoundError:
        return False


def check_integrity(path: Path, *, full: bool = False) -> None:
    """``quick_check`` (or the full ``integrity_check``) of the whole file; ``StoreError`` if it
    is damaged. Reads every page: 0.5 s at a million runs, so not on every open."""
    pragma = "integrity_check(1)" if full else "quick_check(1)"
    integrity = execute(f"PRAGMA {pragma}").fetchone()
    if integrity is None or integrity[0] != "ok":
        raise StoreError(
            f"the database {path} is damaged ({integrity[0] if integrity else 'no answer'}); "
            "it was left untouched. Move it aside to start afresh, or restore a backup"
        )


def prepare(path: Path, *, check: bool) -> Path | None:
    """Check the file is a database of ours before anything writes to it (every page of it when
    ``check``: after an unclean shutdown), then migrate."""
    if check:
        check_integrity(path)
    migrations.refuse_newer(migrations.read_version(path), path)
    # WAL is written into the header, so only now that the file is known to be ours.
    mode = execute("PRAGMA journal_mode = WAL").fetchone()
    if mode is None or str(mode[0]).lower() != "wal":
        log.warning("%s: WAL is not available here (journal mode %s)", path, mode)
    return migrations.migrate(path)


def refuse_unusable_file(path: Path) -> None:
    """Fail on what SQLite would misreport or, worse, take over: a directory, an unreadable file,
    a file of another program. Read only; nothing is changed."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read the database {path}: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise StoreError(f"the database {path} is a directory, not a file; it was left untouched")
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"the database {path} is not a regular file; it was left untouched")
    try:
        with path.open("rb") as file:
            header = file.read(_HEADER_SIZE)
    except OSError as exc:
        raise StoreError(f"cannot read the database {path}: {exc.strerror or exc}") from exc
    if not os.access(path, os.W_OK):
        raise StoreError(f"the database {path} is read-only for this user")
    # An empty file is a valid empty database (and what ``create_private_file`` makes).
    if header and not header.startswith(_SQLITE_MAGIC):
        raise StoreError(
            f"{path} is not an SQLite database (damaged, or another program's file); it was left "
            "untouched. Move it aside to start afresh, or restore a backup"
        )
    # With a write-ahead log, a checkpoint may be under way in another process: it writes the
    # header (the new page count) first and the pages after it, so for a moment the file is
    # shorter than its header says, and the log holds the rest. Not damage: SQLite sorts it out.
    if header and not _has_log(path) and _shorter_than_its_header_says(header, info.st_size):
        raise StoreError(
            f"the database {path} is damaged (shorter than its header says: truncated); it was "
            "left untouched. Move it aside to start afresh, or restore a backup"
        )


def _has_log(path: Path) -> bool:
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def _shorter_than_its_header_says(header: bytes, size: int) -> bool:
    """The header's page count, when SQLite marks it valid, checked against the file's size: a
    truncated file is caught at open without reading it all (file format, section 1.3)."""
    if len(header) < _HEADER_SIZE:
        return True
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96] and pages > 0
    return valid and size < pages * page_size


def tighten_modes(path: Path) -> None:
    """The database and its WAL hold the user's commands: readable by the user only."""
    if os.name == "nt":
        return  # NTFS permissions come from the per-user profile directory, not mode bits
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            mode = stat.S_IMODE(name.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode != PRIVATE_FILE_MODE:
            os.chmod(name, PRIVATE_FILE_MODE)


@contextmanager
def translate_errors(path: Path | str) -> Iterator[None]:
    errors: tuple[type[BaseException], ...] = (PeeweeException, sqlite3.Error)
    try:
        yield
    except (*errors, *backend.driver_errors()) as exc:
        message = str(exc)
        if "locked" in message or "busy" in message:
            raise StoreUnavailable(
                f"the database {path} is locked by another process "
                f"(waited {BUSY_TIMEOUT:g} s): {message}"
            ) from exc
        if "not a database" in message or "malformed" in message:
            raise StoreError(
                f"the database {path} is damaged ({message}); it was left untouched. "
                "Move it aside to start afresh, or restore a backup"
            ) from exc
        if _passing(exc, message):
            raise StoreUnavailable(f"the database {path}: {message}") from exc
        raise StoreError(f"the database {path}: {message}") from exc
    except OSError as exc:
        text = f"{exc.filename or path}: {exc.strerror or exc}"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise StoreUnavailable(text) from exc
        raise StoreError(text) from exc


def _passing(error: BaseException, message: str) -> bool:
    """A full disk, an I/O error, or a shared store's server out of reach: what another try
    may get past (a constraint, a damaged file or a bad statement it never will)."""
    if isinstance(error, sqlite3.OperationalError | PeeweeOperationalError):
        lowered = message.lower()
        if "full" in lowered or "disk i/o" in lowered:
            return True
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(
        error, psycopg.OperationalError | psycopg.InterfaceError
    )


def sqlite_database(path: Path) -> SqliteDatabase:
    """A connection, not yet open, to the database file at ``path``, as every part of the store
    opens it: foreign keys on, full fsync, waiting ``BUSY_TIMEOUT`` for another writer."""
    return SqliteDatabase(
        str(path),
        pragmas=[("foreign_keys", "ON"), ("synchronous", "FULL")],
        timeout=BUSY_TIMEOUT,
        thread_safe=False,
        autoconnect=False,
        check_same_thread=False,
    )
