"""What wins a pixel column of a lane: on a week's strip a minutely job has a dozen runs and dues
per column, and a run that went wrong among them must be seen whatever their order (``Mark``).
Read from the rendered image, offscreen, without a stored render."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from domi_desktop.model import Run, RunStatus, Trigger
from domi_desktop.story.dues import DueKind, DueStory, Lane, Timeline
from domi_desktop.ui.palette import LIGHT
from domi_desktop.ui.timeline.layout import BAR_TOP, TICK_TOP
from domi_desktop.ui.timeline.view import TimelineView

UTC = ZoneInfo("UTC")
START = datetime(2026, 11, 23, tzinfo=UTC)
END = START + timedelta(days=7)
NOON = START + timedelta(days=3, hours=12)
"""The odd one out, among runs and dues every minute for an hour either side."""


def minutely(odd: Run, position: str) -> list[Run]:
    """A run a minute from 11:00 to 13:00, succeeded, except ``odd`` at noon, placed first,
    in the middle or last in the lane's order (the order the store gave them in)."""
    runs = [run_at(minute, RunStatus.succeeded) for minute in range(-60, 61)]
    index = {"first": 0, "middle": 60, "last": len(runs)}[position]
    return [*runs[:index], odd, *runs[index:]]


def run_at(minute: int, status: RunStatus, *, late: bool = False, id: int = 0) -> Run:
    at = NOON + timedelta(minutes=minute)
    return Run(
        id=id or 1000 + minute,
        schedule_id=1,
        status=status,
        trigger=Trigger.scheduled,
        due=at,
        fired_at=at,
        started_at=at,
        finished_at=at + timedelta(seconds=20),
        late=late,
    )


def shown(qtbot: QtBot, runs: list[Run], stories: list[DueStory]) -> tuple[TimelineView, QImage]:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1280, 200)
    view.set_data(
        Timeline(
            START, END, END, "laptop", (), (Lane(1, "Every minute", "UTC", (*stories,), (*runs,)),)
        )
    )
    return view, view.grab().toImage()


def colors_at(view: TimelineView, image: QImage, y: int) -> set[str]:
    """The colours a lane shows at noon, two pixels below ``y`` (a bar's or a tick's top)."""
    x, top = int(view.x_of(NOON)), int(view.lane_top(0)) + y + 2
    return {image.pixelColor(x + dx, top).name() for dx in (-1, 0, 1)}


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize(
    ("status", "late", "ink"),
    [
        (RunStatus.failed, False, LIGHT.error),
        (RunStatus.timed_out, False, LIGHT.error),
        (RunStatus.failed, True, LIGHT.error),  # a catch-up that failed: red, as History says
        (RunStatus.interrupted, False, LIGHT.late),
        (RunStatus.succeeded, True, LIGHT.late),
    ],
)
def test_a_run_that_went_wrong_is_seen_among_a_hundred_that_went_well(
    qtbot: QtBot, status: RunStatus, late: bool, ink: QColor, position: str
) -> None:
    odd = run_at(0, status, late=late, id=1)
    view, image = shown(qtbot, minutely(odd, position), [])
    assert ink.name() in colors_at(view, image, BAR_TOP)


@pytest.mark.parametrize("position", ["first", "middle", "last"])
def test_a_failure_is_seen_over_a_wait_and_a_wait_over_successes(
    qtbot: QtBot, position: str
) -> None:
    waited = replace(
        run_at(0, RunStatus.succeeded, id=1),
        fired_at=NOON - timedelta(hours=2),
        reason="started after waiting 120 min for the charger",
    )
    runs = minutely(waited, position)
    view, image = shown(qtbot, runs, [])
    column = int(view.x_of(NOON - timedelta(minutes=30)))
    hatch = {
        image.pixelColor(column + dx, int(view.lane_top(0)) + BAR_TOP + 3).name() for dx in (0, 1)
    }
    assert LIGHT.late.name() in hatch  # the wait, over the successes of its last hour

    failed = run_at(-30, RunStatus.failed, id=2)
    view, image = shown(qtbot, [*runs, failed] if position == "last" else [failed, *runs], [])
    column = int(view.x_of(NOON - timedelta(minutes=30))) + 1  # the failure's start
    bar = {image.pixelColor(column, int(view.lane_top(0)) + BAR_TOP + dy).name() for dy in (3, 4)}
    assert bar == {LIGHT.error.name()}  # not hatched: the failure's every pixel


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize(
    ("kind", "status", "ink"),
    [
        (DueKind.on_time, RunStatus.failed, LIGHT.error),
        (DueKind.missed, RunStatus.skipped, LIGHT.muted),
        (DueKind.late, RunStatus.succeeded, LIGHT.late),
    ],
)
def test_a_due_that_did_not_go_to_plan_is_seen_among_a_hundred_on_time(
    qtbot: QtBot, kind: DueKind, status: RunStatus, ink: QColor, position: str
) -> None:
    runs = minutely(run_at(0, status, id=1), position)
    stories = [DueStory(run, kind if run.id == 1 else DueKind.on_time) for run in runs]
    view, image = shown(qtbot, [], stories)
    assert ink.name() in colors_at(view, image, TICK_TOP)
