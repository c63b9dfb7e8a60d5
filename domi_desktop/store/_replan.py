"""What the scheduler needs to re-plan when the world moved under it: another process's schedule
changes, a wall clock set back past a schedule's ``last_due``, and a row that no longer decodes.

A claim advances ``last_due`` and inserts the due's run row in one transaction, so normally no run
row has a due later than its schedule's ``last_due``. Only ``rebase_last_due`` (after the clock went
back) makes such rows, and they are exactly the dues already decided that must never be decided
again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from domi_desktop.store import backend, codec
from domi_desktop.store.migrations import CHANGES_KEY
from domi_desktop.store.models import RunRow, ScheduleRow, database, execute


def change_counter(*, lock: bool = False) -> int:
    """The schedule changes the database's triggers counted (migration 5). ``lock``: inside a
    PostgreSQL write, hold the counter's row until commit, so that no other writer's bump lands
    between this read and the caller's own (SQLite's write lock already excludes them)."""
    locking = " FOR UPDATE" if lock and backend.is_postgresql(database.obj) else ""
    query = f"SELECT value FROM meta WHERE key = {database.param}{locking}"
    return int(execute(query, (CHANGES_KEY,)).fetchone()[0])


def rebase(schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
    """Compare-and-set ``last_due`` (to an earlier instant), inside the caller's write
    transaction; False when it was not ``expected``."""
    unchanged = (
        ScheduleRow.last_due.is_null()
        if expected is None
        else ScheduleRow.last_due == codec.to_micros(expected)
    )
    changed = (
        ScheduleRow.update(last_due=codec.to_micros(last_due))
        .where((ScheduleRow.id == schedule_id) & unchanged)
        .execute()
    )
    return bool(changed)


def decided_ahead() -> dict[int, frozenset[datetime]]:
    """Schedule id → the dues of its run rows later than its ``last_due``."""
    query = (
        RunRow.select(RunRow.schedule_id, RunRow.due)
        .join(ScheduleRow, on=RunRow.schedule_id == ScheduleRow.id)
        .where(RunRow.due.is_null(False) & (RunRow.due > ScheduleRow.last_due))
        .tuples()
    )
    rows: Iterable[tuple[int, int]] = query  # type: ignore[assignment]  # .tuples() rows
    found: dict[int, set[datetime]] = {}
    for schedule_id, due in rows:
        found.setdefault(schedule_id, set()).add(codec.from_micros(due))
    return {schedule_id: frozenset(dues) for schedule_id, dues in found.items()}
