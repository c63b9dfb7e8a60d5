"""The Timeline over a real week in a real store (tests/support/timeline_week.py), offscreen: every due
says what History says of it, the keyboard and the pointer reach each due and land on its run,
and the picture shows the sleep, the time without the app, the catch-up, the wait and the
failures where they happened (golden_test.py compares whole renders)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from domi_desktop.cron import next_run, parse
from domi_desktop.store import Store
from domi_desktop.story.dues import CAUSES, TEMPLATES, WAITED_FOR, DueKind
from domi_desktop.ui import i18n
from domi_desktop.ui.history.window import HistoryWindow
from domi_desktop.ui.timeline.window import TimelineWindow
from tests.support.timeline_week import NOW, RIGA, START, Week


@pytest.fixture
def timeline(qtbot: QtBot, store: Store, week: Week) -> TimelineWindow:
    opened: list[int] = []
    window = TimelineWindow(store, opened.append, now=lambda: NOW)
    window.opened = opened  # type: ignore[attr-defined]
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show_period(START, 7)
    return window


def expected_dues(week: Week) -> int:
    count = 0
    for schedule in week.schedules:
        at, expr = START - timedelta(microseconds=1), parse(schedule.expr)
        while (at := next_run(expr, at, RIGA)) is not None and at < NOW:  # type: ignore[assignment]
            count += 1
    return count


def test_every_due_of_the_week_reads_exactly_as_history_says_it(
    qtbot: QtBot, store: Store, week: Week, timeline: TimelineWindow
) -> None:
    history = HistoryWindow(store)
    qtbot.addWidget(history)
    data = timeline.view._data
    assert data is not None
    dues = data.dues()
    assert len(dues) == expected_dues(week) == 68  # every due of the week, none twice

    same = 0
    for story in dues:
        line = timeline.view.words_for(story)
        assert history.show_run(story.run.id)
        assert line in history.details.text().split(" · "), (story.run.id, line)
        same += 1
    assert same == len(dues)  # 100 %


def test_the_week_tells_the_sleep_the_catch_up_the_wait_and_the_failure(
    timeline: TimelineWindow, week: Week
) -> None:
    data = timeline.view._data
    assert data is not None
    lines = {story.run.id: timeline.view.words_for(story) for story in data.dues()}
    assert lines[week.runs["catch_up"]] == (
        "late: the laptop was asleep Tue 23:10-07:02; ran at 07:03; 1 earlier due skipped"
    )
    assert lines[week.runs["waited"]] == "waited 42 min for the charger; ran at 09:42"
    assert lines[week.runs["failed"]] == "on time; ran at 09:00, failed: exit code 3"
    missed = [s for s in data.dues() if s.kind is DueKind.missed]
    assert len(missed) == 1 + 10 + 2  # backup Wed 02:30; sync's ten of the long sleep, two Sat
    backup_wed = min(missed, key=lambda s: s.due)
    assert lines[backup_wed.run.id] == (
        "missed: the laptop was asleep Tue 23:10-Thu 07:02; ran once at Thu 07:03, late"
    )
    saturday = sorted((s for s in missed if s.due.weekday() == 5), key=lambda s: s.due)
    assert [lines[s.run.id] for s in saturday] == [
        "missed: domi-desktop was not running 11:50-18:05; ran once at 18:06, late",
        "missed: the laptop was asleep 13:00-17:30; ran once at 18:06, late",  # the journal's
    ]


def test_arrows_move_between_dues_and_enter_opens_the_run(
    qtbot: QtBot, timeline: TimelineWindow
) -> None:
    view = timeline.view
    data = view._data
    assert data is not None
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Home)
    first = view.focused()
    assert first is not None and first.run.id == data.lanes[0].stories[0].run.id
    qtbot.keyClick(view, Qt.Key.Key_Right)
    second = view.focused()
    assert second is not None and second.run.id == data.lanes[0].stories[1].run.id
    assert timeline.line.text() == view.words_for(second)  # said for the keyboard's user
    qtbot.keyClick(view, Qt.Key.Key_Down)  # Tue 02:30 -> the report's nearest: Tue 09:00
    below = view.focused()
    assert below is not None and below.run.schedule_id == data.lanes[1].schedule_id
    assert below.due == second.due + timedelta(hours=6, minutes=30)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert timeline.opened == [below.run.id]  # type: ignore[attr-defined]
    qtbot.keyClick(view, Qt.Key.Key_End)
    last = view.focused()
    assert last is not None and last.run.id == data.lanes[-1].stories[-1].run.id


def test_a_click_on_a_due_opens_its_run_and_hovering_tells_its_line(
    qtbot: QtBot, timeline: TimelineWindow, week: Week
) -> None:
    view = timeline.view
    story = view._data.story_of(week.runs["failed"])  # type: ignore[union-attr]
    assert story is not None
    lane = next(i for i, row in enumerate(view._data.lanes) if story in row.stories)  # type: ignore[union-attr]
    point = QPointF(view.x_of(story.due), view.lane_top(lane) + 8)
    assert view.due_at(point) == story
    assert view.due_at(QPointF(point.x() + 40, point.y())) is None  # between two dues: none
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=point.toPoint())
    assert timeline.opened == [week.runs["failed"]]  # type: ignore[attr-defined]
    assert view.focused() == story


def test_it_fits_a_1280_by_720_screen_with_every_schedule_in_sight(
    timeline: TimelineWindow,
) -> None:
    timeline.show()
    QApplication.processEvents()
    hint = timeline.sizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720
    view = timeline.view
    visible = view.visibleRegion().boundingRect()
    assert visible.bottom() >= view.lane_top(len(view._data.lanes))  # type: ignore[union-attr]
    assert view.x_of(NOW) < visible.right()


def test_the_lines_speak_chinese_with_nothing_left_untranslated(timeline: TimelineWindow) -> None:
    i18n.set_language("zh")
    try:
        i18n.reset_missing()
        data = timeline.view._data
        assert data is not None
        timeline.view.texts_changed()
        lines = [timeline.view.words_for(story) for story in data.dues()]
        assert i18n.missing() == set()
        assert any(line.startswith("错过：电脑在 ") for line in lines)
        assert any("等待充电器 42 分钟" in line for line in lines)
        assert timeline.windowTitle() == "时间线 — domi-desktop"
    finally:
        i18n.set_language("en")


def test_a_day_shows_one_day_and_earlier_and_later_move_by_it(timeline: TimelineWindow) -> None:
    timeline.span_choice.setCurrentIndex(1)
    data = timeline.view._data
    assert data is not None and data.end - data.start == timedelta(days=1)
    first = data.start
    timeline.later.click()
    assert timeline.view._data.start - first == timedelta(days=1)  # type: ignore[union-attr]
    timeline.earlier.click()
    timeline.earlier.click()
    assert first - timeline.view._data.start == timedelta(days=1)  # type: ignore[union-attr]


def test_every_template_of_a_due_line_has_its_chinese() -> None:
    i18n.set_language("zh")
    try:
        i18n.reset_missing()
        for template in (*TEMPLATES, *WAITED_FOR):
            assert i18n.tr(template) != template
        assert i18n.missing() == set()
        assert set(CAUSES.values()) <= set(TEMPLATES)
    finally:
        i18n.set_language("en")


def test_an_open_timeline_reads_again_once_after_runs_change(
    qtbot: QtBot, store: Store, week: Week, timeline: TimelineWindow
) -> None:
    timeline.show()
    before = len(timeline.view._data.lanes[0].runs)  # type: ignore[union-attr]
    store.record_manual_run(week.schedules[0].id, NOW - timedelta(hours=1))
    timeline.runs_changed()
    timeline.runs_changed()  # a burst: one read
    qtbot.waitUntil(
        lambda: len(timeline.view._data.lanes[0].runs) == before + 1,  # type: ignore[union-attr]
        timeout=10_000,
    )
    timeline.hide()
    timeline.runs_changed()  # hidden: nothing read until it shows again
    assert not timeline._soon.isActive()
