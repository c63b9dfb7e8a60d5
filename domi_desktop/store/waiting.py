"""Runs held back by their conditions: the ``waiting`` rows, and what turns them into a start or
a skip. Called by ``Store`` under its lock; each write is one transaction and only moves a row
that is still ``waiting`` (the first outcome wins, as for running rows)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from peewee import fn

from domi_desktop.model import Run, RunStatus, Trigger
from domi_desktop.store import _rows, codec
from domi_desktop.store.models import RunRow

_WAITING = RunStatus.waiting.value


def waiting_runs() -> list[Run]:
    return [
        _rows.run(row)
        for row in RunRow.select().where(RunRow.status == _WAITING).order_by(RunRow.id)
    ]


def start_waiting(
    run_id: int, started_at: datetime, log_path: str | None, *, late: bool, reason: str | None
) -> bool:
    """``waiting`` -> ``running`` (started now); False when it is no longer waiting."""
    changed = (
        RunRow.update(
            status=RunStatus.running.value,
            started_at=codec.to_micros(started_at),
            log_path=log_path,
            late=late,
            reason=reason,
            **_rows.owner_columns(),
        )
        .where((RunRow.id == run_id) & (RunRow.status == _WAITING))
        .execute()
    )
    return bool(changed)


def skip_waiting(run_id: int, finished_at: datetime, reason: str) -> bool:
    """``waiting`` -> ``skipped`` with ``reason``; False when it is no longer waiting."""
    changed = (
        RunRow.update(
            status=RunStatus.skipped.value, finished_at=codec.to_micros(finished_at), reason=reason
        )
        .where((RunRow.id == run_id) & (RunRow.status == _WAITING))
        .execute()
    )
    return bool(changed)


def record_waiting(
    schedule_id: int, due: datetime | None, fired_at: datetime, reason: str, resumed_from: int
) -> int:
    """A run stopped because a condition went away waits to run again, once, with its due."""
    _rows.schedule_row(schedule_id)
    _rows.run_row(resumed_from)
    row = _rows.new_run(
        schedule_id,
        RunStatus.waiting,
        Trigger.resumed,
        _rows.owner_columns(),
        fired_at=codec.to_micros(fired_at),
        due=codec.optional_micros(due),
        reason=reason,
        resumed_from=resumed_from,
    )
    return int(RunRow.insert(row).execute())


def last_successes() -> dict[int, datetime]:
    """Schedule id -> the end of its latest succeeded run (one grouped query for all)."""
    query = (
        RunRow.select(RunRow.schedule_id, fn.MAX(RunRow.finished_at).alias("last"))
        .where(RunRow.status == RunStatus.succeeded.value)
        .group_by(RunRow.schedule_id)
    )
    rows: list[tuple[int, int | None]] = list(cast(Any, query.tuples()))
    return {schedule_id: codec.from_micros(last) for schedule_id, last in rows if last is not None}
