"""A windowed schedule's row on the Timeline: its window each night as a light band, the run (or
the skipped mark) inside it; the band's nights are the scheduler's own, 9 h across a DST change."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from PySide6.QtGui import QColor, QImage, QPalette
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, Conditions, Policies, Run, RunStatus, Trigger, Window
from domi_desktop.store import Store
from domi_desktop.story.dues import DueKind, DueStory, Lane, Timeline
from domi_desktop.ui.palette import LIGHT
from domi_desktop.ui.timeline.layout import BAR_TOP, ROW, TICK_TOP, Inks, lay_out, window_spans
from domi_desktop.ui.timeline.view import WINDOW_ALPHA, TimelineView

NIGHTS = Window(time(22), time(6))
START = datetime(2026, 11, 23, tzinfo=UTC)
END = START + timedelta(days=7)
INKS = Inks(ok="#2060c0", late="#c08000", muted="#808080", error="#c00000", plain="#000000")


def lane(
    window: Window | None, runs: tuple[Run, ...] = (), stories: tuple[DueStory, ...] = ()
) -> Lane:
    return Lane(1, "Nightly backup", "Europe/Riga", stories, runs, window)


def test_the_bands_are_the_windows_nights_in_the_schedules_zone() -> None:
    spans = window_spans(lane(NIGHTS), START, END)
    # Riga is UTC+2 in November: 22:00-06:00 there is 20:00-04:00 UTC; the night begun before
    # the week and the one running past it are cut at its edges.
    assert spans[0] == (START, START + timedelta(hours=4))
    assert spans[1] == (START + timedelta(hours=20), START + timedelta(days=1, hours=4))
    assert spans[-1] == (START + timedelta(days=6, hours=20), END)
    assert len(spans) == 8
    assert window_spans(lane(None), START, END) == []


def test_a_night_across_the_dst_change_is_nine_hours() -> None:
    start = datetime(2026, 10, 24, 12, tzinfo=UTC)  # Riga leaves summer time on the 25th
    (night,) = window_spans(lane(NIGHTS), start, start + timedelta(hours=20))
    assert night == (datetime(2026, 10, 24, 19, tzinfo=UTC), datetime(2026, 10, 25, 4, tzinfo=UTC))
    assert night[1] - night[0] == timedelta(hours=9)


def test_the_layout_places_each_night_in_pixels_and_none_without_a_window(qtbot: QtBot) -> None:
    data = Timeline(START, END, END, "laptop", (), (lane(NIGHTS), lane(None)))
    shapes = lay_out(data, 1280, INKS)
    windowed, plain = shapes.bands
    assert plain == []
    assert len(windowed) == 8
    # 1102 pixels for the week: a night is 8 h, 52 or 53 of them, 157 apart.
    assert all(51 <= right - left <= 54 for left, right in windowed[1:-1])
    assert {b[0] - a[0] for a, b in itertools.pairwise(windowed[1:-1])} <= {
        157, 158,
    }  # fmt: skip


def run_at(at: datetime, status: RunStatus) -> Run:
    return Run(
        id=int(at.timestamp()) // 60, schedule_id=1, status=status, trigger=Trigger.scheduled,
        due=at, fired_at=at, started_at=at if status is RunStatus.succeeded else None,
        finished_at=at + timedelta(minutes=40) if status is RunStatus.succeeded else at,
    )  # fmt: skip


def test_the_band_is_painted_under_the_run_and_the_skipped_mark(qtbot: QtBot) -> None:
    ran = run_at(START + timedelta(days=2, hours=22), RunStatus.succeeded)  # 00:00 in Riga
    skipped = run_at(START + timedelta(days=3, hours=22), RunStatus.skipped)
    stories = (DueStory(ran, DueKind.on_time), DueStory(skipped, DueKind.skipped))
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1280, 200)
    view.set_data(Timeline(START, END, END, "laptop", (), (lane(NIGHTS, (ran,), stories),)))
    image: QImage = view.grab().toImage()
    top = int(view.lane_top(0))
    base = view.palette().color(QPalette.ColorRole.Base)
    band = QColor(view.palette().color(QPalette.ColorRole.Highlight))
    band.setAlpha(WINDOW_ALPHA)

    def at(moment: datetime, y: int) -> QColor:
        return image.pixelColor(int(view.x_of(moment)), top + y)

    low = ROW - 4  # under the bars: band or base only
    inside = at(START + timedelta(days=2, hours=21), low)
    outside = at(START + timedelta(days=2, hours=12), low)
    assert outside == base
    assert inside != base
    parts = (QColor.red, QColor.green, QColor.blue)
    blended = [round(part(base) + (part(band) - part(base)) * WINDOW_ALPHA / 255) for part in parts]
    assert all(abs(part(inside) - want) <= 2 for part, want in zip(parts, blended, strict=True))
    ok = view.palette().color(QPalette.ColorRole.Highlight)
    assert at(START + timedelta(days=2, hours=22, minutes=20), BAR_TOP + 3) == ok  # the run
    tick = {at(START + timedelta(days=3, hours=22), TICK_TOP + 2).name()}
    assert tick == {LIGHT.muted.name()}  # the skipped mark, over the band


def test_the_store_gives_a_lane_its_window(tmp_path: Path) -> None:
    action = CommandAction(argv=("true",))
    with Store.open(tmp_path / "data", now=START, machine="laptop") as store:
        windowed = Policies(conditions=Conditions(window=NIGHTS))
        store.create_schedule("Nightly", "@daily", "Europe/Riga", action, windowed, now=START)
        store.create_schedule("Hourly", "@hourly", "Europe/Riga", action, now=START)
        lanes = store.timeline(START, END, END).lanes
    assert [(each.name, each.window) for each in lanes] == [("Nightly", NIGHTS), ("Hourly", None)]
