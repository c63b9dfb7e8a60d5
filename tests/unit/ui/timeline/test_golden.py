"""Golden renders of the fixture week (tests/support/timeline_week.py), offscreen at 1280x720: the colours
where the week's events are (robust to fonts and styles: each is looked for in a few pixels
around its place), and the whole strip against a stored render, pixel by pixel with a tolerance
(text is outside the strip: names on the left, days above). ``DOMI_UPDATE_GOLDEN=1`` writes the
stored render again after a deliberate change of the picture: look at it before committing it."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from domi_desktop.store import Store
from domi_desktop.ui.palette import DARK, LIGHT, dark_palette
from domi_desktop.ui.timeline.view import HEADER, MACHINE_ROW, NAMES_WIDTH, ROW, TimelineView
from domi_desktop.ui.timeline.window import TimelineWindow
from tests.support.timeline_week import ASLEEP, CHARGER_WAIT, NOW, QUIT, START, Week

GOLDEN = Path(__file__).with_name("golden") / "week-dark.png"
TOLERANCE = 48
"""Per channel: antialiasing and blending may differ a little between Qt builds."""
MOST_DIFFERENT = 0.005
"""The share of the strip's pixels that may differ beyond the tolerance."""


def render(qtbot: QtBot, store: Store, *, dark: bool) -> tuple[TimelineView, QImage]:
    window = TimelineWindow(store, lambda _run: None, now=lambda: NOW)
    qtbot.addWidget(window)
    if dark:
        window.setPalette(dark_palette())
    window.resize(1280, 720)
    window.show_period(START, 7)
    window.show()
    qtbot.waitExposed(window)
    view = window.view
    return view, view.grab().toImage()


def near(image: QImage, x: float, y: float, color: QColor, radius: int = 2) -> bool:
    """Whether a pixel within ``radius`` of (x, y) has ``color`` (within the tolerance)."""
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            pixel = image.pixelColor(int(x) + dx, int(y) + dy)
            if all(
                abs(a - b) <= TOLERANCE
                for a, b in zip(pixel.getRgb()[:3], color.getRgb()[:3], strict=True)
            ):
                return True
    return False


def bar_y(view: TimelineView, lane: int) -> float:
    return view.lane_top(lane) + ROW / 2 + 4


def noon(day: int) -> datetime:
    return START + timedelta(days=day, hours=12)


@pytest.mark.parametrize("dark", [True, False], ids=["dark", "light"])
def test_each_event_of_the_week_is_painted_where_and_as_it_happened(
    qtbot: QtBot, store: Store, week: Week, dark: bool
) -> None:
    view, image = render(qtbot, store, dark=dark)
    shades = DARK if dark else LIGHT
    machine = HEADER + 2 + MACHINE_ROW / 2
    assert near(image, view.x_of(noon(2)), machine, QColor(70, 96, 200))  # asleep all Wednesday
    assert near(image, view.x_of(noon(0)), machine, QColor(90, 170, 110))  # awake on Monday
    assert not near(image, view.x_of(noon(0)), machine, QColor(70, 96, 200))
    off = view.x_of(QUIT[0] + timedelta(minutes=20))  # Saturday noon, before the journal's sleep
    hatch = [image.pixelColor(int(off) + dx, int(machine)) for dx in range(-4, 5)]
    assert len({c.rgb() for c in hatch}) > 1  # hatched, not a plain band

    catch_up = week.runs["catch_up"]  # the backup's Thursday 07:03, late: amber
    thursday = ASLEEP[1] + timedelta(minutes=1)
    assert near(image, view.x_of(thursday) + 1, bar_y(view, 0), shades.late)
    assert catch_up
    failed_at = START + timedelta(days=3, hours=9)  # the report, Thursday 09:00
    assert near(image, view.x_of(failed_at) + 1, bar_y(view, 1), shades.error)
    waiting = START + timedelta(days=4, hours=9) + CHARGER_WAIT / 2  # Friday, on battery
    assert near(image, view.x_of(waiting), view.lane_top(1) + ROW / 2, shades.late, radius=3)
    missed = START + timedelta(days=2, hours=12)  # sync's Wednesday noon, asleep: a grey tick
    assert near(image, view.x_of(missed), view.lane_top(2) + 6, shades.muted)
    assert not near(image, view.x_of(missed), bar_y(view, 2), shades.late)  # and no run


def test_the_strip_matches_the_stored_render(qtbot: QtBot, store: Store, week: Week) -> None:
    view, image = render(qtbot, store, dark=True)
    lanes = len(week.schedules)
    strip = QRect(NAMES_WIDTH, HEADER, 1280 - NAMES_WIDTH - 40, int(view.lane_top(lanes)) - HEADER)
    shown = image.copy(strip).convertToFormat(QImage.Format.Format_RGB32)
    if os.environ.get("DOMI_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        shown.save(str(GOLDEN))
    golden = QImage(str(GOLDEN)).convertToFormat(QImage.Format.Format_RGB32)
    assert golden.size() == shown.size()
    different = 0
    for y in range(shown.height()):
        for x in range(0, shown.width()):
            a, b = shown.pixelColor(x, y), golden.pixelColor(x, y)
            if (
                max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue()))
                > TOLERANCE
            ):
                different += 1
    assert different / (shown.width() * shown.height()) <= MOST_DIFFERENT
