"""The store: schedules and runs in one SQLite file (or a shared PostgreSQL database, see
``backend``), behind an API of plain dataclasses.

Every method takes the instants it records (``now``, ``fired_at``...) from the caller: the store
never reads the clock, so the scheduler's fake clock drives it in tests like everything else.

Threads: one connection per store, shared by all threads under a lock, so a store can be handed to
worker threads and ``close`` really closes. Processes: every write is a ``BEGIN IMMEDIATE``
transaction, so two processes on one file serialise (waiting up to ``BUSY_TIMEOUT`` seconds). On
PostgreSQL the row locks of the conditional updates serialise machines (``claims._Dialect``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection, Iterable, Sequence
from contextlib import suppress
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import Action, Policies, Schedule
from domi_desktop.paths import (
    DB_FILENAME,
    create_private_file,
    ensure_private_dir,
    resolve_data_dir,
)
from domi_desktop.store import (
    _open,
    _replan,
    _rows,
    backend,
    claims,
    codec,
    copy,
    migrations,
    retention,
)
from domi_desktop.store.core import OPEN_GUARD
from domi_desktop.store.models import RunRow, ScheduleRow, database, execute
from domi_desktop.store.story import StoryStore

DEFAULT_POLICIES = Policies()
IMPORT_PREFIX = "import:"
"""The ``meta`` rows of imports made: the key (a document's digest) -> the ids it made."""


_IMPORTED = (
    "name", "expr", "tz", "enabled", "action", "policies", "last_due", "created_at",
    "updated_at", "notes",
)  # fmt: skip
"""The columns an import writes, in the order ``import_schedules`` gives them."""


class Store(StoryStore):
    """Schedules and their runs. Open with ``Store.open``; one open store per process.

    The models are bound through one module-level ``peewee.DatabaseProxy`` (the Vorta pattern),
    hence one open store at a time: opening a second raises instead of rebinding the first.
    """

    # -- opening and closing -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        now: datetime,
        url: str | None = None,
        machine: str | None = None,
    ) -> Store:
        """Open (creating or migrating) ``domi.sqlite3`` in the data dir, then drop expired runs.

        ``url`` (else ``$DOMI_STORE``) names a shared PostgreSQL database instead; the data dir
        then keeps only the run logs. ``machine`` (else ``$DOMI_MACHINE``, else the host name) is
        the name this process claims runs under.

        Every page is checked (``quick_check``) only when the last process left the file open
        (killed, crashed, power lost); otherwise the header is checked, not the whole file.

        ``data_dir`` is the ``--data-dir`` option; see ``resolve_data_dir``. A file that is not a
        domi-desktop database, is corrupt, unreadable or from a newer release raises ``StoreError``
        naming it, and is left exactly as it was.
        """
        directory = resolve_data_dir(data_dir)
        path = directory / DB_FILENAME
        target = backend.Target(backend.resolve_url(url), path)
        holder = claims.Holder(
            backend.machine_name(machine), timedelta(seconds=backend.lease_seconds())
        )
        if target.url is not None:
            return cls._open_postgresql(directory, target, holder, now)
        with OPEN_GUARD:
            if database.obj is not None:
                raise RuntimeError("a store is already open in this process; close it first")
            try:
                ensure_private_dir(directory)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the data directory {directory}: {exc.strerror or exc}"
                ) from exc
            _open.refuse_unusable_file(path)
            unclean = _open.was_left_open(path)
            try:
                create_private_file(path)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the database {path}: {exc.strerror or exc}"
                ) from exc
            db = _open.sqlite_database(path)
            database.initialize(db)
            try:
                with _open.translate_errors(path):
                    db.connect()
                    backup = _open.prepare(path, check=unclean)
                    _open.tighten_modes(path)
            except BaseException:
                database.initialize(None)
                db.close()
                raise
        return cls._opened(cls(db, directory, backup, target, holder), now)

    @classmethod
    def _open_postgresql(
        cls, directory: Path, target: backend.Target, holder: claims.Holder, now: datetime
    ) -> Store:
        assert target.url is not None
        with OPEN_GUARD:
            if database.obj is not None:
                raise RuntimeError("a store is already open in this process; close it first")
            db = backend.postgresql(target.url)
            database.initialize(db)
            try:
                with _open.translate_errors(target.label):
                    ensure_private_dir(directory)
                    db.connect()
                    migrations.migrate_postgresql(target.label)
            except BaseException:
                database.initialize(None)
                db.close()
                raise
        return cls._opened(cls(db, directory, None, target, holder), now)

    @classmethod
    def _opened(cls, store: Store, now: datetime) -> Store:
        try:
            store.prune_expired(now)
        except BaseException:
            store.close()
            raise
        return store

    # -- schedules -----------------------------------------------------------------------------

    def create_schedule(
        self,
        name: str,
        expr: str,
        tz: str,
        action: Action,
        policies: Policies = DEFAULT_POLICIES,
        *,
        enabled: bool = True,
        notes: str = "",
        now: datetime,
    ) -> Schedule:
        """A new schedule starts with ``last_due = now``: nothing fires for the past."""
        stamp = codec.to_micros(now)
        with self._using(), self._schedule_write():
            schedule_id = ScheduleRow.insert(
                name=name,
                expr=expr,
                tz=tz,
                enabled=enabled,
                action=codec.encode_action(action),
                policies=codec.encode_policies(policies),
                last_due=stamp,
                created_at=stamp,
                updated_at=stamp,
                notes=notes,
            ).execute()
            return self._schedule(_rows.schedule_row(int(schedule_id)))

    def import_schedules(
        self, schedules: Sequence[Schedule], key: str, *, now: datetime
    ) -> tuple[list[Schedule], bool]:
        """Create ``schedules`` (their ids and times are not used) in one transaction: all or
        none, whatever stops it. ``key`` names what was imported (a document's digest): when an
        import of the same key made schedules of which some still exist, nothing is made, and
        those are returned with True (a file imported twice is not run twice)."""
        stamp = codec.to_micros(now)
        meta_key = f"{IMPORT_PREFIX}{key}"
        with self._using(), self._schedule_write():
            found = execute(
                f"SELECT value FROM meta WHERE key = {database.param}", (meta_key,)
            ).fetchone()
            if found is not None:
                before = ScheduleRow.select().where(ScheduleRow.id.in_(json.loads(found[0])))
                kept = [self._schedule(row) for row in before.order_by(ScheduleRow.id)]
                if kept:
                    return kept, True
            # One statement text for every row, and the rows read back in one query: built
            # per row by the ORM, an import of 2,000 took seconds (minutes in a slow guest).
            insert = (
                f"INSERT INTO schedules ({', '.join(_IMPORTED)}) "
                f"VALUES ({', '.join([database.param] * len(_IMPORTED))}) RETURNING id"
            )
            made = [
                int(execute(insert, (
                    s.name, s.expr, s.tz, s.enabled, codec.encode_action(s.action),
                    codec.encode_policies(s.policies), stamp, stamp, stamp, s.notes,
                )).fetchone()[0])
                for s in schedules
            ]  # fmt: skip
            execute(
                f"INSERT INTO meta (key, value) VALUES ({database.param}, {database.param}) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (meta_key, json.dumps(made)),
            )
            rows = ScheduleRow.select().where(ScheduleRow.id.in_(made)).order_by(ScheduleRow.id)
            return [self._schedule(row) for row in rows], False

    def get_schedule(self, schedule_id: int) -> Schedule:
        with self._using():
            return self._schedule(_rows.schedule_row(schedule_id))

    def schedule_labels(
        self, schedule_ids: Collection[int] | None = None
    ) -> dict[int, tuple[str, str]]:
        """Id -> (name, zone) of every schedule, or of those of ``schedule_ids``, by id: what
        the History shows of a schedule, without decoding its action and policies."""
        query = ScheduleRow.select(ScheduleRow.id, ScheduleRow.name, ScheduleRow.tz)
        if schedule_ids is None:
            chunks = [query.order_by(ScheduleRow.id)]
        else:
            ids = sorted(set(schedule_ids))
            chunks = [query.where(ScheduleRow.id.in_(chunk)) for chunk in codec.in_chunks(ids)]
        labels: dict[int, tuple[str, str]] = {}
        with self._using():
            for chunk in chunks:
                rows: Iterable[tuple[int, str, str]] = chunk.tuples()  # type: ignore[assignment]
                labels.update((id_, (name, tz)) for id_, name, tz in rows)
        return labels

    def paused_schedules(self, limit: int) -> list[Schedule]:
        """The first ``limit`` readable disabled schedules by id: what the tray's menu shows
        after the scheduled ones, without decoding every schedule."""
        paused: list[Schedule] = []
        with self._using():
            for row in ScheduleRow.select().where(~ScheduleRow.enabled).order_by(ScheduleRow.id):
                if len(paused) == limit:
                    break
                with suppress(StoreError):
                    paused.append(self._schedule(row))
        return paused

    def list_schedules(self) -> list[Schedule]:
        """The schedules that can be read, by id; ``read_schedules`` also names the others."""
        return self.read_schedules()[0]

    def read_schedules(self) -> tuple[list[Schedule], dict[int, str]]:
        """The readable schedules by id, and the id of each unreadable row with the reason.

        A row whose stored action or policies cannot be decoded must not take the others down
        (one such row once stopped all 39 healthy schedules); nor may it vanish silently, so
        it is reported for the scheduler's log and ``schedule list``. ``delete_schedule`` and
        ``update_schedule(action=..., policies=...)`` still work on it, to repair or remove it.
        """
        schedules: list[Schedule] = []
        broken: dict[int, str] = {}
        with self._using():
            for row in ScheduleRow.select().order_by(ScheduleRow.id).iterator():
                try:
                    schedules.append(self._schedule(row))
                except StoreError as error:
                    broken[row.id] = str(error)
        return schedules, broken

    def change_counter(self) -> int:
        """How many schedule changes the database has counted: triggers (migration 5) bump it on
        every insert, delete and edit of a schedule by any writer (this process, the CLI, another
        instance, a hand edit), never for a write of ``last_due`` alone (claims, the clock set
        back), so the app's claims and results on its other connections do not move it."""
        with self._using():
            return _replan.change_counter()

    def changes_elsewhere(self) -> int:
        """``change_counter`` less the changes this store made: it moves only when another
        connection (another process) changed a schedule."""
        with self._using():
            return _replan.change_counter() - self._own_changes

    def rebase_last_due(
        self, schedule_id: int, expected: datetime | None, last_due: datetime
    ) -> bool:
        """Set ``last_due`` back to ``last_due`` if it still is ``expected`` (compare-and-set).

        For a wall clock set back behind ``last_due``: the scheduler plans from the clock again;
        the dues already decided stay recorded and ``decided_ahead`` names them.
        """
        with self._using(), self._atomic():
            return _replan.rebase(schedule_id, expected, last_due)

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        """Schedule id → dues already run or skipped that lie after its ``last_due`` (after
        ``rebase_last_due``): they must never be decided again."""
        with self._using():
            return _replan.decided_ahead()

    def update_schedule(
        self,
        schedule_id: int,
        *,
        now: datetime,
        name: str | None = None,
        expr: str | None = None,
        tz: str | None = None,
        action: Action | None = None,
        policies: Policies | None = None,
        enabled: bool | None = None,
        notes: str | None = None,
    ) -> Schedule:
        """Change the given fields (None leaves one as it is).

        A new expression or zone, or re-enabling, sets ``last_due = now``: the old ``last_due`` was
        measured against another calendar, or the pause was the user's choice, and either way the
        past must not fire.
        """
        stamp = codec.to_micros(now)
        with self._using(), self._schedule_write():
            row = _rows.schedule_row(schedule_id)
            changes: dict[Any, Any] = {ScheduleRow.updated_at: stamp}
            if name is not None:
                changes[ScheduleRow.name] = name
            if expr is not None:
                changes[ScheduleRow.expr] = expr
            if tz is not None:
                changes[ScheduleRow.tz] = tz
            if action is not None:
                changes[ScheduleRow.action] = codec.encode_action(action)
            if policies is not None:
                changes[ScheduleRow.policies] = codec.encode_policies(policies)
            if enabled is not None:
                changes[ScheduleRow.enabled] = enabled
            if notes is not None:
                changes[ScheduleRow.notes] = notes
            if (
                (expr is not None and expr != row.expr)
                or (tz is not None and tz != row.tz)
                or (enabled and not row.enabled)
            ):
                changes[ScheduleRow.last_due] = stamp
            ScheduleRow.update(changes).where(ScheduleRow.id == schedule_id).execute()
            return self._schedule(_rows.schedule_row(schedule_id))

    def set_enabled(self, schedule_id: int, enabled: bool, now: datetime) -> Schedule:
        return self.update_schedule(schedule_id, now=now, enabled=enabled)

    def delete_schedule(self, schedule_id: int) -> None:
        """Delete the schedule, its runs (the foreign key cascades) and their log files."""
        with self._using():
            with self._schedule_write():
                logs = [
                    row.log_path
                    for row in RunRow.select(RunRow.log_path).where(
                        RunRow.schedule_id == schedule_id
                    )
                    if row.log_path
                ]
                if not ScheduleRow.delete().where(ScheduleRow.id == schedule_id).execute():
                    raise NotFoundError(f"no schedule with id {schedule_id}")
            retention.remove_logs(self.log_dir, logs)

    # -- counting ------------------------------------------------------------------------------

    def count_schedules(self) -> int:
        """Counted again only when the schedule change counter moved: ``count(*)`` walks the
        table (a millisecond at 10,000 schedules) and ``app.status`` and the windows ask on the
        GUI thread. Never waits while another thread uses this store (the recorder's pruning
        reads held it for 150 ms in a burst): the count last read answers then."""
        counted = self._counted
        if counted is None:
            return self._count_schedules()
        if not self._lock.acquire(blocking=False):
            return counted[1]
        try:
            return self._count_schedules()
        finally:
            self._lock.release()

    def _count_schedules(self) -> int:
        with self._using():
            changes = _replan.change_counter()
            counted = self._counted
            if counted is None or counted[0] != changes:
                counted = self._counted = (changes, int(ScheduleRow.select().count()))
            return counted[1]

    # -- copying a whole store (``domi-desktop store migrate``) ---------------------------------

    def dump(self) -> copy.Snapshot:
        """Every schedule and run, as stored (``last_due`` included)."""
        with self._using():
            return copy.dump(self._db)

    def load(self, snapshot: copy.Snapshot, *, replace: bool = False) -> None:
        """Make this store an exact copy of ``snapshot``, in one transaction; refuses a store that
        holds schedules or runs unless ``replace``."""
        with self._using():
            copy.load(self._db, snapshot, replace=replace, label=self.location)

    # -- internals -----------------------------------------------------------------------------

    def _schedule(self, row: ScheduleRow) -> Schedule:
        try:
            return Schedule(
                id=row.id,
                name=row.name,
                expr=_shared(row.expr),
                tz=_shared(row.tz),
                action=codec.decode_action(row.action),
                enabled=row.enabled,
                policies=codec.decode_policies(row.policies),
                last_due=codec.optional_datetime(row.last_due),
                created_at=codec.from_micros(row.created_at),
                updated_at=codec.from_micros(row.updated_at),
                notes=row.notes,
            )
        # A hand-edited row may hold text or a huge number where an instant belongs.
        except (ValueError, TypeError, OverflowError) as exc:
            raise StoreError(f"schedule {row.id} in {self.location} cannot be read: {exc}") from exc


def _shared(text: str) -> str:
    """One string for every schedule's equal expression or zone: thousands of schedules share a
    few, and the planner keeps each schedule as long as the app runs. A hand-edited row's
    non-text value is left for the reader to refuse, as before."""
    return sys.intern(text) if isinstance(text, str) else text
