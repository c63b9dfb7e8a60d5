"""A missed due's line says how the run that covered it went, and the dues a fire counted but did
not list are shown on the earliest it listed; History and the Timeline say it alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, FireClaim, RunStatus, Trigger
from domi_desktop.scheduler.decide import MAX_LISTED_SKIPS
from domi_desktop.store import Store
from domi_desktop.story.dues import LISTED_PER_FIRE
from domi_desktop.ui.history.window import HistoryWindow
from domi_desktop.ui.timeline.window import TimelineWindow
from tests.unit.ui.history import test_history as history_tests

berlin = history_tests.berlin
"""History's own tests' OS zone (Berlin, UTC+1 in March)."""

NOW = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)


def details(window: HistoryWindow, run_id: int) -> list[str]:
    assert window.show_run(run_id)
    return window.details.text().split(" · ")


def timeline_line(qtbot: QtBot, store: Store, run_id: int) -> str:
    timeline = TimelineWindow(store, lambda _: None, now=lambda: NOW)
    qtbot.addWidget(timeline)
    timeline.show_period(NOW - timedelta(days=1), 1)
    data = timeline.view._data
    assert data is not None
    (story,) = [s for s in data.dues() if s.run.id == run_id]
    return timeline.view.words_for(story)


def test_a_missed_due_covered_by_a_run_on_time_says_on_time(qtbot: QtBot, tmp_path: Path) -> None:
    with Store.open(tmp_path / "data", now=NOW - 10 * HOUR) as store:
        hourly = store.create_schedule(
            "hourly", "10 * * * *", "UTC", CommandAction(argv=("true",)), now=NOW - 10 * HOUR
        )
        missed, due = NOW - 2 * HOUR + 10 * MINUTE, NOW - HOUR + 10 * MINUTE
        # The wake came just before the next due: that due's own fire, on time, covered it.
        fire = store.claim_fire(
            FireClaim(
                hourly.id,
                store.get_schedule(hourly.id).last_due,
                due,
                due,
                missed_count=1,
                skipped=(missed,),
            )
        )
        assert fire is not None
        store.start_run(fire, due)
        store.finish_run(fire, status=RunStatus.failed, finished_at=due + MINUTE, exit_code=1)
        history = HistoryWindow(store)
        qtbot.addWidget(history)
        (skipped,) = [r for r in store.runs(hourly.id) if r.status is RunStatus.skipped]
        line = "missed: the computer was asleep or off; ran once at 18:10, on time, failed"
        assert line in details(history, skipped.id)
        assert timeline_line(qtbot, store, skipped.id) == line


def test_dues_beyond_the_listed_ones_are_counted_on_the_earliest_listed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    assert LISTED_PER_FIRE == MAX_LISTED_SKIPS
    with Store.open(tmp_path / "data", now=NOW - 10 * HOUR) as store:
        often = store.create_schedule(
            "often", "* * * * *", "UTC", CommandAction(argv=("true",)), now=NOW - 10 * HOUR
        )
        due = NOW - MINUTE
        listed = tuple(due - n * MINUTE for n in range(LISTED_PER_FIRE, 0, -1))
        last = store.get_schedule(often.id).last_due
        fire = store.claim_fire(
            FireClaim(often.id, last, due, NOW, trigger=Trigger.catch_up, late=True,
                      missed_count=179, skipped=listed)
        )  # fmt: skip
        assert fire is not None
        store.start_run(fire, NOW)
        store.finish_run(fire, status=RunStatus.succeeded, finished_at=NOW, exit_code=0)
        history = HistoryWindow(store)
        qtbot.addWidget(history)
        rows = sorted(
            (r for r in store.runs(often.id, limit=None) if r.status is RunStatus.skipped),
            key=lambda r: r.due or NOW,
        )
        assert len(rows) == LISTED_PER_FIRE
        more = "and 79 more before it, counted and not listed"
        assert any(line.endswith(f"; {more}") for line in details(history, rows[0].id))
        assert more in timeline_line(qtbot, store, rows[0].id)
        assert not any(more in line for line in details(history, rows[1].id))
        assert any(
            line.endswith("ran once at 19:00, late") for line in details(history, rows[1].id)
        )
