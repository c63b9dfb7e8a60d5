"""Rows and values: a run row from its parts, a ``Run`` from a row, owners of running runs."""

from __future__ import annotations

from typing import Any

from domi_desktop.actions import identity
from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import Run, RunStatus, Trigger
from domi_desktop.store import codec
from domi_desktop.store._reader import CodecError, decode_member
from domi_desktop.store.models import RunRow, ScheduleRow


def schedule_row(schedule_id: int) -> ScheduleRow:
    row = ScheduleRow.get_or_none(ScheduleRow.id == schedule_id)
    if row is None:
        raise NotFoundError(f"no schedule with id {schedule_id}")
    return row


def run_row(run_id: int) -> RunRow:
    row = RunRow.get_or_none(RunRow.id == run_id)
    if row is None:
        raise NotFoundError(f"no run with id {run_id}")
    return row


def owner_columns(machine: str | None = None, lease_until: int | None = None) -> dict[str, Any]:
    owner = identity.this_process()
    return {
        "owner_pid": owner.pid,
        "owner_token": owner.token,
        "owner_started": owner.started,
        "machine": machine,
        "lease_until": lease_until,
    }


def owner_alive(row: RunRow) -> bool:
    # No owner: written by schema version 1, before owners were recorded; its writer is long gone.
    if row.owner_pid is None:
        return False
    return identity.is_alive(
        identity.Owner(pid=row.owner_pid, token=row.owner_token or "", started=row.owner_started)
    )


def new_run(
    schedule_id: int,
    status: RunStatus,
    trigger: Trigger,
    owner: dict[str, Any],
    *,
    fired_at: int,
    due: int | None = None,
    reason: str | None = None,
    late: bool = False,
    missed_count: int = 0,
    resumed_from: int | None = None,
) -> dict[str, Any]:
    return {
        "schedule_id": schedule_id,
        "status": status.value,
        "trigger": trigger.value,
        "due": due,
        "fired_at": fired_at,
        "reason": reason,
        "late": late,
        "missed_count": missed_count,
        "resumed_from": resumed_from,
        "attempt": 0,
        **owner,
    }


def run(row: RunRow) -> Run:
    try:
        status = decode_member(RunStatus, row.status, "status")
        trigger = decode_member(Trigger, row.trigger, "trigger")
    except CodecError as exc:
        raise StoreError(f"run {row.id} cannot be read: {exc}") from exc
    return Run(
        id=row.id,
        schedule_id=row.schedule_id,
        status=status,
        trigger=trigger,
        due=codec.optional_datetime(row.due),
        fired_at=codec.optional_datetime(row.fired_at),
        started_at=codec.optional_datetime(row.started_at),
        finished_at=codec.optional_datetime(row.finished_at),
        reason=row.reason,
        late=bool(row.late),  # a plain row from SQLite (``Store.timeline``'s) has 0 or 1
        missed_count=row.missed_count,
        exit_code=row.exit_code,
        output_tail=row.output_tail,
        log_path=row.log_path,
        resumed_from=row.resumed_from,
        attempt=row.attempt,
    )
