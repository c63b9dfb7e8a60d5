"""What ``Store`` reads of the machine's story, and the runs of a stretch of time, for the
Timeline and ``domi-desktop timeline`` (``Store`` inherits them). The writes are the recorder's
(``spans``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from domi_desktop.model import Run
from domi_desktop.store import _rows, codec, spans
from domi_desktop.store.core import StoreCore
from domi_desktop.store.models import RunRow
from domi_desktop.story import MachineSpan

LONGEST_RUN = timedelta(days=1)
"""How long before a stretch a run may have begun and still show in it (a bar from the left)."""
CLAIMED_WITHIN = timedelta(days=7)


class StoryStore(StoreCore):
    def machine_spans(
        self, start: datetime, end: datetime, machine: str | None = None
    ) -> list[MachineSpan]:
        """The awake, asleep and off spans of ``machine`` (this one by default) that overlap
        [``start``, ``end``), by start."""
        with self._using():
            cursor = self._db.cursor()  # type: ignore[no-untyped-call]
            return spans.between(cursor, machine or self.machine, start, end)

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
            rows = RunRow.select().where(condition).order_by(RunRow.id)
            runs = [_rows.run(row) for row in rows]
        return [run for run in runs if _shown(run, first, last)]


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
