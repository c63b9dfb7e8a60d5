"""What ``Store`` reads of the machine's story, and the runs of a stretch of time, for the
Timeline and ``domi-desktop timeline`` (``Store`` inherits them). The writes are the recorder's
(``spans``)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any

from peewee import Value

from domi_desktop.model import Run, Window
from domi_desktop.store import _rows, codec, pauses, spans
from domi_desktop.store._reader import CodecError
from domi_desktop.store.models import RunRow, ScheduleRow
from domi_desktop.store.runs import RunStore
from domi_desktop.story import MachineSpan, Pause
from domi_desktop.story.dues import (
    DueKind,
    DueStory,
    Lane,
    Timeline,
    explain,
    explain_one,
    has_due,
)

LONGEST_RUN = timedelta(days=1)
"""How long before a stretch a run may have begun and still show in it (a bar from the left)."""
CLAIMED_WITHIN = timedelta(days=7)
FIRE_WITHIN = 101
"""A missed due's row is followed by its fire's within this many ids (at most 100 skipped rows
are written with a fire, in the same transaction)."""
_TICK = timedelta(microseconds=1)
_COLUMNS = [
    getattr(RunRow, field.name)
    for field in fields(Run)
    if field.name not in ("output_tail", "log_path")
]
"""What a ``Run`` holds but its output: not the claim's owner, lease and job columns."""
_NO_TAIL = [Value(None).alias("output_tail"), Value(None).alias("log_path")]


def _row_type() -> Any:
    return namedtuple("_Row", [column.name for column in _COLUMNS] + ["output_tail", "log_path"])


_Row = _row_type()
"""A run row as the database gives it (SQLite's ``late`` is 0/1: ``_rows.run`` makes it a bool):
a week of 10,000 runs through peewee's own conversions took half as long again."""


class StoryStore(RunStore):
    def machine_spans(
        self, start: datetime, end: datetime, machine: str | None = None
    ) -> list[MachineSpan]:
        """The awake, asleep and off spans of ``machine`` (this one by default) that overlap
        [``start``, ``end``), by start."""
        with self._using():
            cursor = self._db.cursor()  # type: ignore[no-untyped-call]
            return spans.between(cursor, machine or self.machine, start, end)

    def pauses(self, start: datetime, end: datetime, machine: str | None = None) -> list[Pause]:
        """The "Pause all" spans of ``machine`` (this one by default) that overlap [``start``,
        ``end``), by start, each with the dues it kept from running counted."""
        with self._using():
            cursor = self._db.cursor()  # type: ignore[no-untyped-call]
            return pauses.between(cursor, machine or self.machine, start, end)

    def runs_between(
        self, start: datetime, end: datetime, schedule_id: int | None = None
    ) -> list[Run]:
        """The runs due (or, without a due, fired) in [``start``, ``end``), and those fired
        before it still running into it, by id: read through the ``fired_at`` index, since a
        run is claimed at or after its due."""
        since = codec.to_micros(start - LONGEST_RUN)
        # A due near the end may be claimed long after it (the skipped rows of a catch-up are
        # recorded at the catch-up's time): a week past the end is read, then sifted by due.
        until = codec.to_micros(end + CLAIMED_WITHIN)
        condition = (RunRow.fired_at >= since) & (RunRow.fired_at < until)
        if schedule_id is not None:
            condition &= RunRow.schedule_id == schedule_id
        first, last = codec.to_micros(start), codec.to_micros(end)
        with self._using():
            # Plain tuples, not models (a third of a week's read), without the output tails.
            query = RunRow.select(*_COLUMNS, *_NO_TAIL).where(condition).order_by(RunRow.id)
            cursor = self._db.execute_sql(*query.sql())  # type: ignore[no-untyped-call]
            runs = [_rows.run(_Row._make(row)) for row in cursor.fetchall()]
        return [run for run in runs if _shown(run, first, last)]

    def due_story(self, run: Run, now: datetime) -> DueStory | None:
        """``run``'s due and what became of it, read for this run alone (History's details);
        None for a run with no due of its own (a manual run, a re-run)."""
        if not has_due(run):
            return None
        assert run.due is not None
        later = self.runs_by_id(range(run.id + 1, run.id + FIRE_WITHIN + 1))
        mine = [each for each in later.values() if each.schedule_id == run.schedule_id]
        until = max([run.due, *(each.started_at or each.fired_at or run.due for each in mine)])
        return explain_one(run, mine, self.machine_spans(run.due, until + _TICK), now)

    def timeline(
        self, start: datetime, end: datetime, now: datetime, schedule_id: int | None = None
    ) -> Timeline:
        """Every schedule's dues in [``start``, ``end``) with their stories, its runs, and this
        machine's spans: what the Timeline and ``domi-desktop timeline`` show, read in a few
        queries. A missed due whose catch-up came after ``end`` is read as ``due_story`` reads
        it, so both tell it the same."""
        with self._using():
            rows = ScheduleRow.select(
                ScheduleRow.id, ScheduleRow.name, ScheduleRow.tz, ScheduleRow.policies
            )
            if schedule_id is not None:
                _rows.schedule_row(schedule_id)
                rows = rows.where(ScheduleRow.id == schedule_id)
            labels = {
                row.id: (row.name, row.tz, _window(row.policies))
                for row in rows.order_by(ScheduleRow.id)
            }
        found = self.machine_spans(start, end + CLAIMED_WITHIN)
        by_schedule: dict[int, list[Run]] = {key: [] for key in labels}
        for run in self.runs_between(start, end, schedule_id):
            by_schedule.setdefault(run.schedule_id, []).append(run)
        lanes = []
        for key, runs in by_schedule.items():
            stories = []
            for told in explain(runs, found, now):
                story = told
                if told.kind is DueKind.missed and told.served_by is None:
                    story = self.due_story(told.run, now) or told
                if start <= story.due < end:
                    stories.append(story)
            name, tz, window = labels.get(key, (f"#{key}", "local", None))
            lanes.append(Lane(key, name, tz, tuple(stories), tuple(runs), window))
        paused = tuple(self.pauses(start, end))
        return Timeline(start, end, now, self.machine, tuple(found), tuple(lanes), paused)


def _window(policies: str) -> Window | None:
    """A schedule's hours, read only from the few policies that have them; a row that does not
    read shows no band (History and the editor say what is wrong with it)."""
    if '"window"' not in policies:
        return None
    try:
        return codec.decode_policies(policies).conditions.window
    except CodecError:
        return None


def _shown(run: Run, first: int, last: int) -> bool:
    moment = run.due or run.fired_at
    if moment is None:
        return False
    at = codec.to_micros(moment)
    if first <= at < last:
        return True
    ended = run.finished_at
    ran_into = run.started_at is not None and (ended is None or codec.to_micros(ended) >= first)
    return at < first and ran_into
