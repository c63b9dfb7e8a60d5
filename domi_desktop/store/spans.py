"""The machine's story on disk (``machine_spans``, version 7): what the app writes as it starts,
beats, sleeps, wakes and stops, and what a back-fill from the OS adds.

Each write is a function of a cursor in the caller's write transaction: the engine's recorder runs
them on its own connection (``Writer.transact``), never the GUI thread. At most one span of a
machine is open (``is_open``): the one its app is living now, whose end each heartbeat moves on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from domi_desktop.store import codec
from domi_desktop.story import OS_SOURCES, MachineSpan, Sleep, SpanKind, SpanSource, new_sleeps

_COLUMNS = "id, machine, kind, started_at, ended_at, source"


def _param(cursor: Any) -> str:
    return "?" if isinstance(cursor, sqlite3.Cursor) else "%s"


def _span(row: Sequence[Any]) -> MachineSpan:
    return MachineSpan(
        machine=row[1],
        kind=SpanKind(row[2]),
        start=codec.from_micros(row[3]),
        end=codec.from_micros(row[4]),
        source=SpanSource(row[5]),
        id=int(row[0]),
    )


def between(cursor: Any, machine: str, start: datetime, end: datetime) -> list[MachineSpan]:
    """The spans of ``machine`` that overlap [``start``, ``end``), by start. A row that cannot be
    read (a hand edit, a kind of a later release) is passed over."""
    p = _param(cursor)
    cursor.execute(
        f"SELECT {_COLUMNS} FROM machine_spans WHERE machine = {p} AND ended_at >= {p} "
        f"AND started_at < {p} ORDER BY started_at, id",
        (machine, codec.to_micros(start), codec.to_micros(end)),
    )
    spans: list[MachineSpan] = []
    for row in cursor.fetchall():
        try:
            spans.append(_span(row))
        except (ValueError, TypeError, OverflowError):
            continue
    return spans


def _open_span(cursor: Any, machine: str) -> tuple[int, SpanKind, int] | None:
    p = _param(cursor)
    cursor.execute(
        f"SELECT id, kind, ended_at FROM machine_spans WHERE machine = {p} AND is_open = {p} "
        "ORDER BY id DESC",
        (machine, True),
    )
    rows = cursor.fetchall()
    if len(rows) > 1:  # two instances once shared a name: only the newest stays open
        p = _param(cursor)
        marks = codec.marks(p, len(rows) - 1)
        cursor.execute(
            f"UPDATE machine_spans SET is_open = {p} WHERE id IN ({marks})",
            (False, *[int(row[0]) for row in rows[1:]]),
        )
    if not rows:
        return None
    try:
        return int(rows[0][0]), SpanKind(rows[0][1]), int(rows[0][2])
    except ValueError:
        return None


def _insert(
    cursor: Any,
    machine: str,
    kind: SpanKind,
    start: datetime | int,
    end: datetime | int,
    source: SpanSource,
    *,
    is_open: bool = False,
) -> int:
    p = _param(cursor)
    started = start if isinstance(start, int) else codec.to_micros(start)
    ended = end if isinstance(end, int) else codec.to_micros(end)
    cursor.execute(
        "INSERT INTO machine_spans (machine, kind, started_at, ended_at, source, is_open) "
        f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}) RETURNING id",
        (machine, kind.value, started, max(started, ended), source.value, is_open),
    )
    return int(cursor.fetchone()[0])


def _close(cursor: Any, span_id: int, end: datetime | int | None = None) -> None:
    p = _param(cursor)
    if end is None:
        cursor.execute(f"UPDATE machine_spans SET is_open = {p} WHERE id = {p}", (False, span_id))
        return
    ended = end if isinstance(end, int) else codec.to_micros(end)
    cursor.execute(
        f"UPDATE machine_spans SET is_open = {p}, "
        f"ended_at = CASE WHEN started_at > {p} THEN started_at ELSE {p} END WHERE id = {p}",
        (False, ended, ended, span_id),
    )


def _last_end(cursor: Any, machine: str) -> int | None:
    p = _param(cursor)
    # The app's own spans only: a sleep back-filled from the OS says nothing of the app.
    os_logs = ", ".join(f"'{source.value}'" for source in sorted(OS_SOURCES))
    cursor.execute(
        f"SELECT MAX(ended_at) FROM machine_spans WHERE machine = {p} "
        f"AND source NOT IN ({os_logs})",
        (machine,),
    )
    row = cursor.fetchone()
    return None if row is None or row[0] is None else int(row[0])


def started(cursor: Any, machine: str, at: datetime) -> int:
    """The app starts: what happened since its last word is told (an awake span still open means
    it died: off from its last heartbeat; a sleep still open ends now; else it quit), then a new
    awake span opens. Returns its id."""
    found = _open_span(cursor, machine)
    stamp = codec.to_micros(at)
    if found is not None:
        span_id, kind, ended = found
        if kind is SpanKind.asleep:
            _close(cursor, span_id, stamp)  # it slept until something started it again
        else:
            _close(cursor, span_id)
            if stamp > ended:
                _insert(cursor, machine, SpanKind.off, ended, stamp, SpanSource.crash)
    else:
        last = _last_end(cursor, machine)
        if last is not None and stamp > last:
            _insert(cursor, machine, SpanKind.off, last, stamp, SpanSource.quit)
    return _insert(cursor, machine, SpanKind.awake, stamp, stamp, SpanSource.app, is_open=True)


def beat(cursor: Any, machine: str, at: datetime) -> bool:
    """A heartbeat: the open awake span reaches ``at``. False when none is open (another start
    of this machine took over)."""
    p = _param(cursor)
    cursor.execute(
        f"UPDATE machine_spans SET ended_at = {p} WHERE machine = {p} AND is_open = {p} "
        f"AND kind = {p} AND ended_at < {p}",
        (codec.to_micros(at), machine, True, SpanKind.awake.value, codec.to_micros(at)),
    )
    return bool(cursor.rowcount)


def falling_asleep(cursor: Any, machine: str, at: datetime) -> None:
    """The OS said it goes to sleep: the awake span ends, an asleep one opens."""
    found = _open_span(cursor, machine)
    if found is not None and found[1] is SpanKind.asleep:
        return  # said twice
    if found is not None:
        _close(cursor, found[0], at)
    _insert(cursor, machine, SpanKind.asleep, at, at, SpanSource.signal, is_open=True)


def woke(cursor: Any, machine: str, at: datetime, last_awake: datetime, source: SpanSource) -> int:
    """The machine woke at ``at``: an open sleep (the OS said when it began) ends; else it slept
    from ``last_awake`` (the last heartbeat the app saw), known by ``source`` (a resume signal
    alone, or the clock gap). A new awake span opens; its id."""
    found = _open_span(cursor, machine)
    if found is not None and found[1] is SpanKind.asleep:
        _close(cursor, found[0], at)
    else:
        if found is not None:
            _close(cursor, found[0], last_awake)
        _insert(cursor, machine, SpanKind.asleep, last_awake, at, source)
    return _insert(cursor, machine, SpanKind.awake, at, at, SpanSource.app, is_open=True)


def stopped(cursor: Any, machine: str, at: datetime) -> None:
    """The app quits: its awake span ends now (the next start records the time off)."""
    found = _open_span(cursor, machine)
    if found is not None:
        _close(cursor, found[0], at)


def back_fill(cursor: Any, machine: str, sleeps: Sequence[Sleep], source: SpanSource) -> int:
    """The OS's sleeps that no asleep span on record overlaps; how many were added."""
    if not sleeps:
        return 0
    start = min(sleep.start for sleep in sleeps)
    end = max(sleep.end for sleep in sleeps)
    added = new_sleeps(sleeps, between(cursor, machine, start, end))
    for sleep in added:
        _insert(cursor, machine, SpanKind.asleep, sleep.start, sleep.end, source)
    return len(added)


def prune(cursor: Any, before: datetime) -> int:
    """Spans that ended before ``before`` (every machine's), but never an open one."""
    p = _param(cursor)
    cursor.execute(
        f"DELETE FROM machine_spans WHERE ended_at < {p} AND is_open = {p}",
        (codec.to_micros(before), False),
    )
    return int(cursor.rowcount)
