"""The heads-up before a run: which runs get one, and each due told once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtWidgets import QApplication

from domi_desktop.model import CommandAction, Hold, Policies, Schedule
from domi_desktop.platform.notify import Notice
from domi_desktop.runtime.view import EngineState
from domi_desktop.ui import heads_up

DUE = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)


def schedule(expr: str, **policies: Any) -> Schedule:
    return Schedule(
        1, "job", expr, "UTC", CommandAction(argv=("true",)), policies=Policies(**policies)
    )


def test_only_runs_people_plan_around_get_a_heads_up() -> None:
    assert heads_up.worth_telling(schedule("0 9 * * *"), DUE)
    assert heads_up.worth_telling(schedule("0 * * * *"), DUE)
    assert not heads_up.worth_telling(schedule("*/5 * * * *"), DUE)
    assert heads_up.worth_telling(schedule("0 9 8 12 *", once_at=DUE), DUE)
    assert not heads_up.worth_telling(schedule("0 9 * * *", hold=Hold(DUE)), DUE)  # skipped
    snoozed = Hold(DUE, until=DUE + timedelta(hours=1))
    assert not heads_up.worth_telling(schedule("0 9 * * *", hold=snoozed), snoozed.until)


def test_each_due_is_told_once_five_minutes_ahead(qapp: QApplication) -> None:
    told: list[Notice] = []
    now = [DUE - timedelta(minutes=10)]
    state = EngineState(soonest=((DUE, schedule("0 9 * * *")),))
    watcher = heads_up.HeadsUp(lambda: state, told.append, lambda: True, now=lambda: now[0])
    try:
        watcher.check()
        assert told == []
        now[0] = DUE - timedelta(minutes=4)
        watcher.check()
        watcher.check()
        (notice,) = told
        assert notice.schedule_id == 1 and [key for key, _ in notice.buttons] == [
            "skip",
            "snooze-3600",
        ]
    finally:
        watcher.stop()
