"""A notification shortly before a schedule runs, with "Skip" and "Snooze 1 hour" buttons.

Said only for runs people plan around: one-offs, and schedules that run at most once an hour (a
heads-up before each run of a job every five minutes would be noise). Each due is announced once;
the engine's picture (``EngineState.soonest``) says what comes next, so nothing is computed on the
engine's thread for it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QObject, QTimer

from domi_desktop.cron import next_run
from domi_desktop.errors import DomiError
from domi_desktop.model import Schedule
from domi_desktop.platform.notify import Notice
from domi_desktop.runtime.view import EngineState
from domi_desktop.scheduler import oneoff
from domi_desktop.ui.i18n import person_time, register, tr

AHEAD = timedelta(minutes=5)
"""How long before its due a run is announced."""
CHECK_EVERY_MS = 20_000
QUIET_BELOW = timedelta(hours=1)
"""Schedules that run more often than this get no heads-up."""
SKIP, SNOOZE = "skip", "snooze-3600"
"""The buttons' keys: ``acted(key, schedule_id)`` comes back with one of them."""

register(
    "zh",
    {
        "Runs at {when}: {name}": "{when} 运行：{name}",
        "Skip this one, or run it an hour later.": "可以跳过这一次，或推迟一小时运行。",
        "Skip": "跳过",
        "Snooze 1 hour": "推迟 1 小时",
    },
)


class HeadsUp(QObject):
    """Looks at the engine's picture every 20 s and announces the dues ``AHEAD`` away."""

    def __init__(
        self,
        state: Callable[[], EngineState],
        notify: Callable[[Notice], None],
        wanted: Callable[[], bool],
        parent: QObject | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self._state, self._notify, self._wanted, self._now = state, notify, wanted, now
        self._told: set[tuple[int, datetime]] = set()
        self._timer = QTimer(self)
        self._timer.setObjectName("headsUpTimer")
        self._timer.timeout.connect(self.check)
        self._timer.start(CHECK_EVERY_MS)

    def stop(self) -> None:
        self._timer.stop()

    def check(self) -> None:
        if not self._wanted():
            return
        now = self._now()
        for due, schedule in self._state().soonest:
            if due - now > AHEAD:
                break
            key = (schedule.id, due)
            if due < now or key in self._told or not worth_telling(schedule, due):
                continue
            self._told.add(key)
            self._notify(heads_up_notice(schedule, due))
        self._told = {(sid, due) for sid, due in self._told if due >= now - AHEAD}


def worth_telling(schedule: Schedule, due: datetime) -> bool:
    """A one-off, or a schedule whose next due after this one is an hour or more away (a
    snoozed due is announced at its new time, and not again)."""
    if schedule.policies.once_at is not None:
        return True
    hold = oneoff.live_hold(schedule)
    if hold is not None and (hold.skip or hold.until == due):
        return False
    try:
        following = next_run(schedule.expr, due, schedule.tz)
    except DomiError:
        return False
    return following is None or following - due >= QUIET_BELOW


def heads_up_notice(schedule: Schedule, due: datetime) -> Notice:
    return Notice(
        tr("Runs at {when}: {name}", when=person_time(due, schedule.tz), name=schedule.name),
        tr("Skip this one, or run it an hour later."),
        buttons=((SKIP, tr("Skip")), (SNOOZE, tr("Snooze 1 hour"))),
        schedule_id=schedule.id,
    )
