"""Leases: a machine holds each running run it claimed for ``Holder.lease`` and renews it while
the job runs. A run whose lease expired on another machine (suspended, unplugged, killed) is taken
over: marked ``interrupted`` and returned to be re-run once here. The machine that comes back
finds its run no longer held by it and records nothing more (``superseded``).

All in the caller's write transaction. Every statement is one conditional ``UPDATE``: two machines
taking over the same run at once both try, the row lock orders them, and only the first matches.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from domi_desktop.model import RunStatus, Trigger
from domi_desktop.store import codec
from domi_desktop.store.claims import Holder

EXPIRED = "lease expired on machine "
"""The reason of a taken-over run starts with this, then the machine's name."""


def renew(
    cursor: Any, param: str, holder: Holder, run_ids: Collection[int], now: datetime
) -> set[int]:
    """Extend this machine's leases on ``run_ids``; returns the ids it no longer holds."""
    if not run_ids:
        return set()
    p = param
    ids = sorted(run_ids)
    marks = codec.marks(p, len(ids))
    cursor.execute(
        f"UPDATE runs SET lease_until = {p} WHERE id IN ({marks}) AND status = '{codec.RUNNING}' "
        f"AND (machine IS NULL OR machine = {p}) RETURNING id",
        (holder.lease_until(now), *ids, holder.machine),
    )
    held = {int(row[0]) for row in cursor.fetchall()}
    return set(ids) - held


def take_over(
    cursor: Any,
    param: str,
    holder: Holder,
    now: datetime,
    schedule_ids: Collection[int] | None,
) -> list[int]:
    """Mark ``interrupted`` the running runs of other machines whose lease expired before
    ``now`` (only of ``schedule_ids`` if given: the schedules this machine may run); returns the
    ids to re-run here: not a run that was itself a re-run, not one that already has one."""
    p = param
    stamp = codec.to_micros(now)
    where = (
        f"status = '{codec.RUNNING}' AND machine IS NOT NULL AND machine <> {p} "
        f"AND COALESCE(lease_until, 0) < {p}"
    )
    params: list[object] = [holder.machine, stamp]
    if schedule_ids is not None:
        if not schedule_ids:
            return []
        where += f" AND schedule_id IN ({codec.marks(p, len(schedule_ids))})"
        params.extend(sorted(schedule_ids))
    cursor.execute(
        f"UPDATE runs SET status = '{RunStatus.interrupted.value}', finished_at = {p}, "
        f'reason = {p} || machine WHERE {where} RETURNING id, "trigger"',
        (stamp, EXPIRED, *params),
    )
    taken = [(int(row[0]), row[1]) for row in cursor.fetchall()]
    candidates = sorted(run_id for run_id, trigger in taken if trigger != Trigger.resumed.value)
    if not candidates:
        return []
    marks = codec.marks(p, len(candidates))
    cursor.execute(f"SELECT resumed_from FROM runs WHERE resumed_from IN ({marks})", candidates)
    resumed = {int(row[0]) for row in cursor.fetchall()}
    return [run_id for run_id in candidates if run_id not in resumed]


def superseded_by(cursor: Any, param: str, run_id: int) -> str | None:
    """The machine that re-ran ``run_id`` after taking it over, if one did."""
    cursor.execute(f"SELECT machine FROM runs WHERE resumed_from = {param}", (run_id,))
    row = cursor.fetchone()
    return None if row is None else row[0]
