"""The store as the scheduler's ``ScheduleSource``."""

from __future__ import annotations

from datetime import datetime

from domi_desktop.errors import NotFoundError
from domi_desktop.model import Schedule
from domi_desktop.store import Store


class StoreSource:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._version: int | None = None

    def load(self) -> tuple[list[Schedule], dict[int, str]]:
        self._version = self._store.data_version()
        return self._store.read_schedules()

    def get(self, schedule_id: int) -> Schedule | None:
        try:
            return self._store.get_schedule(schedule_id)
        except NotFoundError:
            return None

    def changed(self) -> bool:
        version = self._store.data_version()
        changed, self._version = version != self._version, version
        return changed

    def rebase(self, schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
        return self._store.rebase_last_due(schedule_id, expected, last_due)

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        return self._store.decided_ahead()
