"""The one road of "a schedule changed", for every reader (the planner, the tray, the Schedules
window, History): the app's own edits with their ids, and ``None`` (any of them may have) when
the planner's re-read found what another process (SQLite's ``data_version``) or another machine
(PostgreSQL's ``NOTIFY``, the per-wake re-read) wrote. Published and heard on the loop thread."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

Listener = Callable[[int | None], None]


class ChangeFeed:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, schedule_id: int | None) -> None:
        for listener in list(self._listeners):
            try:
                listener(schedule_id)
            except Exception:  # one broken reader must not keep the others stale
                log.exception("a reader of schedule changes failed on %s", schedule_id)
