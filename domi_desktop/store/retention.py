"""Retention: which finished runs go (too old, or beyond the newest N of their schedule), and their
log files. Deleted in chunks, each its own short transaction, never inside a claim."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from peewee import fn

from domi_desktop.model import RunStatus
from domi_desktop.store import codec
from domi_desktop.store.models import RunRow

log = logging.getLogger("domi_desktop.store")

KEEP_PER_SCHEDULE = 1000
MAX_AGE = timedelta(days=90)
DELETE_CHUNK = 500
"""Runs deleted per write transaction: a claim waits for one chunk at most."""
CROWD_SPAN = 500
"""Schedules whose runs are counted per read of ``crowded``: a window's read waits for one."""


def expired(now: datetime, max_age: timedelta) -> dict[int, str | None]:
    """Finished runs fired more than ``max_age`` before ``now`` (an index range): ids, logs."""
    finished = RunRow.status != RunStatus.running.value
    cutoff = codec.to_micros(now - max_age)
    return {
        row.id: row.log_path
        for row in RunRow.select(RunRow.id, RunRow.log_path).where(
            finished & (RunRow.fired_at < cutoff)
        )
    }


def schedule_spans(span: int) -> list[tuple[int, int]]:
    """The schedule ids that have runs, as ``[low, high)`` spans of ``span`` ids each: what
    ``crowded`` reads one at a time."""
    low, high = RunRow.select(fn.MIN(RunRow.schedule_id), fn.MAX(RunRow.schedule_id)).scalar(
        as_tuple=True
    )
    if low is None:
        return []
    return [(start, start + span) for start in range(low, high + 1, span)]


def crowded(keep_per_schedule: int, span: tuple[int, int] | None = None) -> dict[int, str | None]:
    """Finished runs beyond the newest ``keep_per_schedule`` of their schedule (those whose id
    is in ``span``, or all): ids, logs.

    Counting runs per schedule reads the (schedule, id) index, so the app does this after a wake
    on its worker, never inside a claim or on every open; span by span, as the whole index of a
    10,000-schedule catch-up (700,000 runs) is a tenth of a second of reading."""
    if keep_per_schedule < 1:
        raise ValueError(f"keep_per_schedule must be at least 1, not {keep_per_schedule}")
    finished = RunRow.status != RunStatus.running.value
    doomed: dict[int, str | None] = {}
    counted = RunRow.select(RunRow.schedule_id)
    if span is not None:
        counted = counted.where(RunRow.schedule_id.between(span[0], span[1] - 1))
    full = [
        row.schedule_id
        for row in counted.group_by(RunRow.schedule_id).having(
            fn.COUNT(RunRow.id) > keep_per_schedule
        )
    ]
    for schedule_id in full:
        oldest_kept = (
            RunRow.select(RunRow.id)
            .where(RunRow.schedule_id == schedule_id)
            .order_by(RunRow.id.desc())
            .offset(keep_per_schedule - 1)
            .limit(1)
            .scalar()
        )
        doomed.update(
            (row.id, row.log_path)
            for row in RunRow.select(RunRow.id, RunRow.log_path).where(
                finished & (RunRow.schedule_id == schedule_id) & (RunRow.id < oldest_kept)
            )
        )
    return doomed


def delete(ids: Sequence[int]) -> int:
    """Delete these runs unless they are running (again); inside the caller's transaction."""
    return int(
        RunRow.delete()
        .where(RunRow.id.in_(list(ids)) & (RunRow.status != RunStatus.running.value))
        .execute()
    )


def remove_logs(log_dir: Path, paths: Sequence[str]) -> None:
    """Delete run logs, but only inside our log dir: a path in the DB is not trusted to point
    at something of ours (the DB may have been copied, edited, or restored elsewhere)."""
    root = log_dir.resolve()
    for name in paths:
        path = Path(name).resolve()
        if not path.is_relative_to(root):
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError:
            log.warning("cannot delete the run log %s", path, exc_info=True)
