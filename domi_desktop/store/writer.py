"""The engine's writes on a connection of their own: a wake's claims and starts, finishes, pids,
manual runs, retention's deletes. Each is one transaction, tried again as it was while the
caller's ``patience`` says so."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from peewee import Database

from domi_desktop.actions import identity
from domi_desktop.errors import StoreUnavailable
from domi_desktop.model import FireClaim, RunStatus, Trigger
from domi_desktop.store import _open, backend, codec, retention
from domi_desktop.store.claims import (
    Finish,
    Holder,
    Start,
    Together,
    check_claim,
    write_claims,
    write_deletes,
    write_finishes,
    write_manual_run,
    write_starts,
    write_transaction,
)

T = TypeVar("T")

Patience = Callable[[StoreUnavailable, int], bool]
"""Asked when a write found the database unavailable, with the error and the tries so far: True
to try the same transaction again (after waiting as long as it likes), False to give up."""


def _impatient(_error: StoreUnavailable, _tries: int) -> bool:
    return False


class Writer:
    """The hot path on a connection of its own, for one thread (the engine's recorder): readers
    of the main connection (the History window, ``app.status``) never wait behind a wake's
    transaction. Each write is one transaction; one the database could not take is rolled back
    whole, so ``patience`` may have it tried again as it was."""

    def __init__(
        self, db: Database, path: Path | str, holder: Holder, patience: Patience = _impatient
    ) -> None:
        self._db = db
        self._param = db.param
        self.path = path
        self.holder = holder
        self.patience = patience

    @classmethod
    def postgresql(cls, url: str, holder: Holder) -> Writer:
        db = backend.postgresql(url)
        label = backend.hide_password(url)
        with _open.translate_errors(label):
            db.connect()
        return cls(db, label, holder)

    @classmethod
    def sqlite(cls, path: Path, holder: Holder) -> Writer:
        db = _open.sqlite_database(path)
        with _open.translate_errors(path):
            db.connect()
        return cls(db, path, holder)

    def claim(self, claims: Sequence[FireClaim]) -> tuple[list[int | None], frozenset[int]]:
        """All the claims in one transaction: their ids, and the runs recorded ``busy`` because
        another machine runs their schedule (``FireClaim.exclusive``). A claim whose schedule is
        gone is None, like a lost one: the batch of a wake must not fail for one schedule deleted
        meanwhile."""
        for claim in claims:
            check_claim(claim)

        if self._param == "?" and Together.takes(claims):
            together = Together(claims, self.holder)
            return self.transact(together.write), frozenset()

        def write(cursor: Any) -> tuple[list[int | None], frozenset[int]]:
            busy: set[int] = set()
            ids = write_claims(
                cursor, self._param, claims, self.holder, gone_is_lost=True, busy=busy
            )
            return ids, frozenset(busy)

        return self.transact(write)

    def start(self, starts: Sequence[Start]) -> list[bool]:
        return self.transact(lambda cursor: write_starts(cursor, self._param, starts, self.holder))

    def finish(self, finishes: Sequence[Finish]) -> list[bool]:
        return self.transact(lambda cursor: write_finishes(cursor, self._param, finishes))

    def record_manual(
        self,
        schedule_id: int,
        fired_at: datetime,
        trigger: Trigger,
        resumed_from: int | None = None,
        *,
        start: Start | None = None,
        status: RunStatus = RunStatus.running,
        reason: str | None = None,
    ) -> int:
        """A manual (or resumed) run recorded, and with ``start`` (its ``run_id`` ignored)
        started, in one transaction; its id. ``status``: see ``write_manual_run``."""

        def write(cursor: Any) -> int:
            run_id = write_manual_run(
                cursor, self._param, schedule_id, fired_at, trigger, self.holder, resumed_from,
                status, reason,
            )  # fmt: skip
            if start is not None:
                started = replace(start, run_id=run_id)
                write_starts(cursor, self._param, [started], self.holder)
            return run_id

        return self.transact(write)

    def abandon(self, keep: Collection[int], now: datetime, reason: str) -> int:
        """This process's runs still ``running`` with no job on record, but ``keep``: claimed by a
        wake the app quit before launching. Recorded ``interrupted`` with ``reason``; how many."""
        p = self._param
        token = identity.this_process().token
        unlaunched = (
            f"SELECT id FROM runs WHERE status = '{codec.RUNNING}' AND job_pid IS NULL "
            f"AND owner_token = {p}"
        )

        def write(cursor: Any) -> int:
            cursor.execute(unlaunched, (token,))
            ids = [int(row[0]) for row in cursor.fetchall() if int(row[0]) not in keep]
            ended = (RunStatus.interrupted.value, codec.to_micros(now), reason)
            for chunk in codec.in_chunks(ids):
                cursor.execute(
                    f"UPDATE runs SET status = {p}, finished_at = {p}, reason = {p} "
                    f"WHERE id IN ({codec.marks(p, len(chunk))}) AND status = '{codec.RUNNING}'",
                    (*ended, *chunk),
                )
            return len(ids)

        return self.transact(write)

    def record_jobs(self, jobs: Sequence[tuple[int, int, str | None]]) -> None:
        """``Store.record_job`` for many (run id, pid, start marker) in one transaction; a run
        that is no longer ``running`` is left as it is."""
        p = self._param
        sql = f"UPDATE runs SET job_pid = {p}, job_started = {p} WHERE id = {p} AND status = {p}"

        def write(cursor: Any) -> None:
            # One statement each, not ``executemany``: on PostgreSQL that is a pipeline (``_many``).
            for run_id, pid, started in jobs:
                cursor.execute(sql, (pid, started, run_id, codec.RUNNING))

        self.transact(write)

    def delete_runs(self, ids: Sequence[int]) -> int:
        """Delete these runs unless they run (again), in chunks of ``retention.DELETE_CHUNK``,
        each its own transaction: a claim waits for one chunk at most."""
        deleted = 0
        for chunk in codec.in_chunks(ids, retention.DELETE_CHUNK):
            deleted += self.transact(partial(write_deletes, self._param, list(chunk)))
        return deleted

    def transact(self, body: Callable[[Any], T]) -> T:
        """``body(cursor)`` in one write transaction, tried again while ``patience`` says so."""
        tries = 0
        while True:
            try:
                with _open.translate_errors(self.path):
                    backend.revive(self._db)
                    with write_transaction(self._db) as cursor:
                        return body(cursor)
            except StoreUnavailable as error:
                tries += 1
                if not self.patience(error, tries):
                    raise

    def close(self) -> None:
        self._db.close()
