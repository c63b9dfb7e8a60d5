"""The Timeline that shows today follows today: past midnight and after a wake days later its
next read shows the new day (or week); one moved to another period stays there. "Last 7 days"
shows the seven days to today, so a Monday morning shows last night."""

from __future__ import annotations

from datetime import datetime, timedelta

from pytestqt.qtbot import QtBot

from domi_desktop.store import Store
from domi_desktop.ui.timeline.window import Span, TimelineWindow
from tests.support.timeline_week import RIGA


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def shown(window: TimelineWindow) -> tuple[datetime, datetime]:
    data = window.view._data
    assert data is not None
    return data.start, data.end


def test_the_day_shown_follows_today_across_midnight_and_a_wake(qtbot: QtBot, store: Store) -> None:
    clock = Clock(datetime(2026, 11, 26, 23, 58, tzinfo=RIGA))
    window = TimelineWindow(store, lambda _: None, now=clock)
    qtbot.addWidget(window)
    window.span_choice.setCurrentIndex(list(Span).index(Span.day))
    assert shown(window)[0] == datetime(2026, 11, 26, tzinfo=RIGA)

    clock.now += timedelta(minutes=4)  # past midnight: the minute's read
    window.refresh()
    assert shown(window)[0] == datetime(2026, 11, 27, tzinfo=RIGA)
    assert window.range_label.text() == "2026-11-27 – 2026-11-27"

    clock.now += timedelta(days=3, hours=8)  # a wake three days later
    window.runs_changed()
    window.refresh()
    assert shown(window)[0] == datetime(2026, 11, 30, tzinfo=RIGA)

    window.earlier.click()  # another day: it stays there
    clock.now += timedelta(days=1)
    window.refresh()
    assert shown(window)[0] == datetime(2026, 11, 29, tzinfo=RIGA)
    window.today.click()
    assert shown(window)[0] == datetime(2026, 12, 1, tzinfo=RIGA)


def test_the_week_follows_today_and_the_last_seven_days_show_last_night(
    qtbot: QtBot, store: Store
) -> None:
    sunday = datetime(2026, 11, 29, 23, 30, tzinfo=RIGA)
    clock = Clock(sunday)
    window = TimelineWindow(store, lambda _: None, now=clock)
    qtbot.addWidget(window)
    assert shown(window) == (
        datetime(2026, 11, 23, tzinfo=RIGA),
        datetime(2026, 11, 30, tzinfo=RIGA),
    )

    clock.now = sunday + timedelta(hours=8)  # Monday morning: a new week
    window.refresh()
    assert shown(window)[0] == datetime(2026, 11, 30, tzinfo=RIGA)

    window.span_choice.setCurrentIndex(list(Span).index(Span.last_days))
    assert window.span_choice.currentText() == "Last 7 days"
    assert shown(window) == (
        datetime(2026, 11, 24, tzinfo=RIGA),
        datetime(2026, 12, 1, tzinfo=RIGA),
    )
    assert window.range_label.text() == "2026-11-24 – 2026-11-30"
    window.earlier.click()
    assert shown(window)[0] == datetime(2026, 11, 17, tzinfo=RIGA)
