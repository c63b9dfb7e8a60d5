""" "Pause all" on disk (``pauses``, version 8): one row a pause, from the moment it was asked for
to the moment it was lifted (NULL while it lasts). The dues it kept from running stay recorded
each as a skipped run (reason ``paused``: the claims that move ``last_due`` need them); a pause
counts them when it is read.

Each write is a function of a cursor in the caller's write transaction (the engine's recorder,
``Writer.transact``), as ``spans``.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from domi_desktop.model import RunStatus, SkipReason
from domi_desktop.store import codec
from domi_desktop.story import Pause


def _param(cursor: Any) -> str:
    return "?" if isinstance(cursor, sqlite3.Cursor) else "%s"


def _open(cursor: Any, machine: str) -> int | None:
    p = _param(cursor)
    cursor.execute(
        f"SELECT id FROM pauses WHERE machine = {p} AND ended_at IS NULL ORDER BY id DESC",
        (machine,),
    )
    row = cursor.fetchone()
    return None if row is None else int(row[0])


def began(cursor: Any, machine: str, at: datetime) -> int:
    """The machine was paused at ``at``; a pause already open goes on (its id)."""
    found = _open(cursor, machine)
    if found is not None:
        return found
    p = _param(cursor)
    cursor.execute(
        f"INSERT INTO pauses (machine, started_at) VALUES ({p}, {p}) RETURNING id",
        (machine, codec.to_micros(at)),
    )
    return int(cursor.fetchone()[0])


def ended(cursor: Any, machine: str, at: datetime) -> bool:
    """The machine's pause was lifted at ``at`` (or the app stopped: a pause does not outlive
    the app that keeps it); False when none was open."""
    p = _param(cursor)
    cursor.execute(
        f"UPDATE pauses SET ended_at = CASE WHEN started_at > {p} THEN started_at ELSE {p} END "
        f"WHERE machine = {p} AND ended_at IS NULL",
        (codec.to_micros(at), codec.to_micros(at), machine),
    )
    return bool(cursor.rowcount)


def settled(cursor: Any, machine: str, at: datetime) -> bool:
    """At start: a pause left open by an app that did not stop (a crash, power lost) ended with
    that app, at its last heartbeat on record (``at`` if there is none)."""
    if _open(cursor, machine) is None:
        return False
    p = _param(cursor)
    cursor.execute(
        f"SELECT MAX(ended_at) FROM machine_spans WHERE machine = {p} AND ended_at <= {p}",
        (machine, codec.to_micros(at)),
    )
    row = cursor.fetchone()
    last = at if row is None or row[0] is None else codec.from_micros(int(row[0]))
    return ended(cursor, machine, last)


def between(cursor: Any, machine: str, start: datetime, end: datetime) -> list[Pause]:
    """The pauses of ``machine`` that overlap [``start``, ``end``), by start, each with the
    number of dues recorded skipped for it."""
    p = _param(cursor)
    cursor.execute(
        f"SELECT id, started_at, ended_at FROM pauses WHERE machine = {p} AND started_at < {p} "
        f"AND (ended_at IS NULL OR ended_at >= {p}) ORDER BY started_at, id",
        (machine, codec.to_micros(end), codec.to_micros(start)),
    )
    rows = cursor.fetchall()
    found: list[Pause] = []
    for pause_id, started, stopped in rows:
        # A due skipped for a pause is claimed at or after it: the fired_at index finds it.
        cursor.execute(
            f"SELECT COUNT(*) FROM runs WHERE fired_at >= {p} AND status = {p} AND reason = {p} "
            f"AND due >= {p} AND (machine IS NULL OR machine = {p})"
            + ("" if stopped is None else f" AND due <= {p}"),
            (started, RunStatus.skipped.value, SkipReason.paused.value, started, machine)
            + (() if stopped is None else (stopped,)),
        )
        dues = int(cursor.fetchone()[0])
        end_at = None if stopped is None else codec.from_micros(int(stopped))
        found.append(Pause(machine, codec.from_micros(int(started)), end_at, dues, int(pause_id)))
    return found


def prune(cursor: Any, before: datetime) -> int:
    """Pauses that ended before ``before`` (every machine's), as the runs they counted go."""
    p = _param(cursor)
    cursor.execute(f"DELETE FROM pauses WHERE ended_at < {p}", (codec.to_micros(before),))
    return int(cursor.rowcount)
