"""The store's core: the one connection, its lock and the transactions every part of ``Store``
writes in (see ``store`` for the threading and process rules).

``Store`` is ``StoreCore`` (this), ``RunStore`` (``runs``: the run rows) and the schedules
(``store``); one class to callers, split here so that each idea reads on its own.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from peewee import SQL, Database, NodeList, SqliteDatabase

from domi_desktop.errors import StoreError
from domi_desktop.model import RunStatus, SkipReason
from domi_desktop.paths import DB_FILENAME, LOG_DIRNAME, ensure_private_dir
from domi_desktop.store import (
    _open,
    _replan,
    _rows,
    backend,
    claims,
    codec,
    listen,
    migrations,
    restore,
    retention,
)
from domi_desktop.store.models import RunRow, database

log = logging.getLogger(__name__)

OPEN_GUARD = threading.Lock()
"""Held while the module-level database proxy is bound or unbound."""


class StoreCore:
    """The connection of a ``Store`` and what its methods share; not used on its own."""

    def __init__(
        self,
        db: Database,
        data_dir: Path,
        migration_backup: Path | None,
        target: backend.Target | None = None,
        holder: claims.Holder | None = None,
    ) -> None:
        self._db = db
        self.data_dir = data_dir
        self.path = data_dir / DB_FILENAME
        self.target = target or backend.Target(None, self.path)
        self.location = self.target.label
        """The file, or the PostgreSQL URL without its password: what messages name."""
        self.holder = holder or claims.Holder(
            backend.machine_name(), timedelta(seconds=backend.LEASE)
        )
        self.migration_backup = migration_backup
        """The copy made before this open migrated the file, else None (to tell the user)."""
        self._lock = threading.RLock()
        self._closed = False
        self._log_dir_made = False
        self._own_changes = 0
        """The bumps of the database's schedule-change counter that this store's writes made."""
        self._counted: tuple[int, int] | None = None
        """The schedule change counter and the schedules counted at it."""
        self._file = None if self.target.shared else _file_identity(self.path)
        """The SQLite file open here, as the OS names it: a restore that moves another file to
        its path leaves this one open under no name (``replaced``)."""
        self._stamp: tuple[int, int] | None = None
        """The header stamps this store wrote (``stamp_file``): the first and the latest."""
        self._accepted = 0
        """The stamp last found in the main file, one of ours."""
        self._main_seen: tuple[int, int] | None = None
        """The main file's size and modification time when its stamp was last read."""
        self._overwritten: Path | None = None
        """The copy kept aside of what was copied over the file, once seen."""

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with OPEN_GUARD:
                database.initialize(None)
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        with self._using():
            return migrations.read_version(self.location)

    @property
    def machine(self) -> str:
        return self.holder.machine

    @property
    def shared(self) -> bool:
        """True on PostgreSQL: other machines may claim from the same schedules."""
        return self.target.shared

    def stamp_file(self) -> None:
        """Stamp the file's header so that a copy over it is seen (``replaced``): the app
        calls this once it holds the file; SQLite only. The stamp moves on with each schedule
        change (``_schedule_write``), so a backup taken while the app runs is told apart too."""
        if self._file is None:
            return
        first = random.randrange(1, 1 << 14) << 16
        try:
            with self._using(), self._atomic():
                self._db.execute_sql(f"PRAGMA application_id = {first}")  # type: ignore[no-untyped-call]
            self._stamp = (first, first)
            self._checkpoint()
        except StoreError as error:
            # Held by another writer now: only a copy over the file goes unseen, said here.
            log.warning("the database file cannot be stamped (%s): a copy over it is not seen",
                        error)  # fmt: skip
            return
        self._accepted = first if restore.application_id(self.path) == first else 0
        self._main_seen = _main_state(self.path)

    def _checkpoint(self) -> None:
        with self._using():
            # Read to its end: a statement left stepping holds its read snapshot open.
            self._db.execute_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()  # type: ignore[no-untyped-call]

    def _next_stamp(self) -> None:
        """Inside a schedule write: the header's stamp moves on with it."""
        if self._stamp is not None:
            first, latest = self._stamp
            if latest + 1 < first + (1 << 16):
                self._stamp = (first, latest + 1)
                self._db.execute_sql(f"PRAGMA application_id = {latest + 1}")  # type: ignore[no-untyped-call]

    def replaced(self) -> str | None:
        """Why the file at ``path`` is no longer the database open here (another file was moved
        there, say a restore from a backup, or it was deleted, or another was copied over it);
        None while it is, and always on PostgreSQL."""
        if self._file is None:
            return None
        now = _file_identity(self.path)
        if now != self._file:
            what = "replaced by another file" if now is not None else "deleted"
            return (
                f"the database file {self.path} was {what} while domi-desktop had it open: "
                "nothing more is written to it; quit and start domi-desktop to use the file "
                "now there"
            )
        if self._overwritten is None and not self._own_stamp():
            self._overwritten = restore.keep_copy(self.path, datetime.now(UTC))
        if self._overwritten is not None:
            return (
                f"another file was copied over the database {self.path} while domi-desktop had "
                f"it open (a backup put back?): it is kept as {self._overwritten.name} and made "
                "the database as it was copied; this instance writes nothing more: quit and start "
                "domi-desktop to use it (`domi-desktop store restore FILE` does this safely)"
            )
        return None

    def _own_stamp(self) -> bool:
        """Whether the main file, when it changed, still holds one of this store's stamps, at
        or after the one last found: SQLite writes it only when it checkpoints our log."""
        if self._stamp is None:
            return True
        state = _main_state(self.path)
        if state == self._main_seen:
            return True
        found = restore.application_id(self.path)
        first, latest = self._stamp
        if found is None:
            return False
        ours = found == self._accepted or (
            first <= found <= latest and (self._accepted == 0 or found >= self._accepted)
        )
        if ours:
            self._accepted, self._main_seen = found, state
        return ours

    def seal(self) -> None:
        """Write nothing more to the file open here (it was ``replaced``): its write-ahead log
        emptied into it, so that the file now at the path never meets this one's log, and the
        connection made read-only (a write fails; a read still answers). A file copied over
        this one is first put back as it was copied, through SQLite, so that what the log held
        before can never be laid over it."""
        if self._overwritten is not None:
            try:
                restore.put_back(self._overwritten, self.path)
            except sqlite3.Error as error:
                raise StoreError(
                    f"the copy over {self.path} cannot be put back ({error}); it is kept as "
                    f"{self._overwritten}"
                ) from None
        with self._using():
            self._db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[no-untyped-call]
            self._db.execute_sql("PRAGMA query_only = 1")  # type: ignore[no-untyped-call]

    # -- logs ----------------------------------------------------------------------------------

    @property
    def log_dir(self) -> Path:
        """Where run logs go; created (mode 0700) by ``log_path_for``."""
        return self.data_dir / LOG_DIRNAME

    def log_path_for(self, run_id: int) -> Path:
        # Made once per open: a catch-up asks for a thousand paths on the GUI thread, and the
        # job supervisor makes the directory again (with the log) should it have gone since.
        if not self._log_dir_made:
            try:
                ensure_private_dir(self.log_dir)
            except OSError as exc:
                raise StoreError(f"cannot create the log directory {self.log_dir}: {exc}") from exc
            self._log_dir_made = True
        return self.log_dir / f"run-{run_id}.log"

    # -- internals -----------------------------------------------------------------------------

    def _delete_runs(self, doomed: Mapping[int, str | None]) -> int:
        ids = sorted(doomed)
        deleted = 0
        for chunk in codec.in_chunks(ids, retention.DELETE_CHUNK):
            with self._using(), claims.write_transaction(self._db):
                deleted += retention.delete(chunk)
        retention.remove_logs(self.log_dir, [path for path in doomed.values() if path])
        return deleted

    @contextmanager
    def _using(self) -> Iterator[None]:
        with self._lock, _open.translate_errors(self.location):
            if self._closed:
                raise StoreError(f"the store for {self.location} is closed")
            backend.revive(self._db)
            yield

    def _atomic(self) -> Any:
        """A write transaction: SQLite's write lock up front; PostgreSQL locks rows as it goes."""
        if isinstance(self._db, SqliteDatabase):
            return self._db.atomic("IMMEDIATE")
        return self._db.atomic()

    @contextmanager
    def _schedule_write(self) -> Iterator[None]:
        """A write transaction that changes schedules (inside ``_using``). Its bumps of the
        change counter are noted as this store's own, so that ``changes_elsewhere`` leaves out
        the edits this process re-plans itself; the other instances hear of it when it commits."""
        with self._atomic():
            before = _replan.change_counter(lock=True)
            self._next_stamp()
            yield
            if self.target.url is not None:
                self._db.execute_sql(listen.NOTIFY)  # type: ignore[no-untyped-call]
            bumped = _replan.change_counter() - before
        self._own_changes += bumped
        if self._stamp is not None and self._own_stamp():
            # Checkpointed at once, so the stamp on the disk moves on with the change: a backup
            # taken before it, copied over the file later, no longer carries the stamp found
            # there. Not when the file is no longer ours: the log must not meet a copy.
            self._checkpoint()
            self._own_stamp()

    def listener(
        self, on_change: Callable[[], None], on_status: Callable[[str | None], None]
    ) -> listen.ChangeListener | None:
        """A listener for the schedule changes of other instances (started by the caller), or
        None on SQLite, where the per-wake re-read is how they are seen."""
        if self.target.url is None:
            return None
        return listen.ChangeListener(self.target.url, on_change, on_status)

    def _mine(self, condition: Any) -> Any:
        """Runs of this machine (or of before machines were recorded): the ones whose owner's
        liveness can be checked here. Another machine's runs are judged by their lease."""
        return condition & (RunRow.machine.is_null() | (RunRow.machine == self.machine))

    def _run_filter(
        self, schedule_id: int | None, status: RunStatus | None, *, paused: bool = True
    ) -> Any:
        """``paused`` False: without the dues a recorded pause kept from running (History tells
        the pause once, its dues counted in it)."""
        condition: Any = RunRow.id.is_null(False)
        if schedule_id is not None:
            _rows.schedule_row(schedule_id)
            condition &= RunRow.schedule_id == schedule_id
        if status is not None:
            condition &= RunRow.status == status.value
        if not paused:
            in_a_pause = NodeList((
                SQL("EXISTS (SELECT 1 FROM pauses WHERE pauses.started_at <="), RunRow.due,
                SQL("AND (pauses.ended_at IS NULL OR pauses.ended_at >="), RunRow.due, SQL("))"),
            ))  # fmt: skip
            condition &= ~(
                (RunRow.status == RunStatus.skipped.value)
                & (RunRow.reason == SkipReason.paused.value)
                & in_a_pause
            )
        return condition

    def _write_one(self, run_id: int, write: Callable[[Any, str], list[bool]]) -> bool:
        with self._using(), claims.write_transaction(self._db) as cursor:
            (done,) = write(cursor, self._db.param)
            if not done:
                _rows.run_row(run_id)
            return done

    def _update_running(self, run_id: int, changes: dict[Any, Any]) -> bool:
        with self._using(), claims.write_transaction(self._db):
            updated = (
                RunRow.update(changes)
                .where((RunRow.id == run_id) & (RunRow.status == codec.RUNNING))
                .execute()
            )
            if not updated:
                _rows.run_row(run_id)
            return bool(updated)


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _main_state(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns
