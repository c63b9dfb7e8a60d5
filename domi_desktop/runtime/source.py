"""The store as the scheduler's ``ScheduleSource``."""

from __future__ import annotations

from datetime import datetime

from domi_desktop.errors import NotFoundError
from domi_desktop.model import Schedule
from domi_desktop.runtime.changes import ChangeFeed
from domi_desktop.store import Store


class StoreSource:
    """The driver's schedules, remembered: a wake's fires need their policies without a read.
    A re-read that finds them changed is published on ``changes`` (another process wrote them)."""

    def __init__(self, store: Store, changes: ChangeFeed | None = None) -> None:
        self._store = store
        self._changes = changes or ChangeFeed()
        self._elsewhere: int | None = None
        """``Store.changes_elsewhere`` when the schedules were last read."""
        self.known: dict[int, Schedule] = {}
        self._seen: dict[int, Schedule] | None = None
        """Every schedule as the last read found it (``known`` may leave some out)."""

    def load(self) -> tuple[list[Schedule], dict[int, str]]:
        self._elsewhere = self._store.changes_elsewhere()
        schedules, broken = self._store.read_schedules()
        self._read(schedules)
        self.known = dict(self._seen or {})
        return schedules, broken

    def _read(self, schedules: list[Schedule]) -> None:
        """A re-read that found the schedules changed tells the readers of ``changes``."""
        seen = {schedule.id: schedule for schedule in schedules}
        changed = self._seen is not None and seen != self._seen
        self._seen = seen
        if changed:
            self._changes.publish(None)

    def get(self, schedule_id: int) -> Schedule | None:
        try:
            schedule = self._store.get_schedule(schedule_id)
        except NotFoundError:
            self.known.pop(schedule_id, None)
            return None
        self.known[schedule_id] = schedule
        return schedule

    def schedule(self, schedule_id: int) -> Schedule:
        return self.known.get(schedule_id) or self._store.get_schedule(schedule_id)

    def changed(self) -> bool:
        """Whether another process changed a schedule since the last read: the app's own edits
        are re-read one by one where they are made, and its claims and run results (written on
        other connections) change no schedule but ``last_due``, which the database does not
        count."""
        elsewhere = self._store.changes_elsewhere()
        changed, self._elsewhere = elsewhere != self._elsewhere, elsewhere
        return changed

    def rebase(self, schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
        return self._store.rebase_last_due(schedule_id, expected, last_due)

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        return self._store.decided_ahead()
