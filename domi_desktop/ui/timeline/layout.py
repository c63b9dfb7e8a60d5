"""The Timeline's layout in whole pixels: each run's bar and wait, each due's tick, merged where
they touch, so that a week of 10,000 runs is painted as a few thousand rectangles (``view``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtGui import QPixmap

from domi_desktop.model import Run, RunStatus
from domi_desktop.story.dues import DueKind, DueStory
from domi_desktop.ui.history.texts import FAILURES

WAITED = "started after waiting"
"""How the gates' words on a run that waited begin (``runtime.gates``)."""


@dataclass
class Shapes:
    """What a paint draws, built by ``_layout``: whole pixels, one shape per pixel column and
    colour however many runs fall on it (a week of 10,000 runs is a few thousand rectangles)."""

    bars: dict[str, set[tuple[int, int, int]]] = field(default_factory=dict)
    """Colour -> (lane, left, right) in pixels."""
    waits: set[tuple[int, int, int]] = field(default_factory=set)
    ticks: dict[str, set[tuple[int, int, int]]] = field(default_factory=dict)
    """Colour -> (lane, left, right): two pixels wide each, side by side merged."""
    dues: list[list[tuple[float, DueStory]]] = field(default_factory=list)
    """Per lane, its dues' x positions in order (hit tests and keyboard moves)."""
    picture: QPixmap | None = None
    """Everything but the focus, painted once per layout."""


def place_runs(
    runs: tuple[Run, ...],
    lane: int,
    origin: float,
    scale: float,
    now: float,
    status_key: dict[RunStatus, str],
    late: str,
    bars: dict[tuple[int, str], list[tuple[int, int]]],
    waits: set[tuple[int, int, int]],
) -> None:
    """Each run's bar (and wait) in pixels: every run of the stretch passes here, so the
    arithmetic is plain and local (a week of 10,000 runs is the budget's bulk)."""
    waiting = RunStatus.waiting
    for run in runs:
        start, reason = run.started_at, run.reason
        if run.status is waiting or (reason is not None and reason.startswith(WAITED)):
            since = run.fired_at or run.due
            if since is not None:
                x0 = int(origin + since.timestamp() * scale)
                until = start.timestamp() if start is not None else now
                waits.add((lane, x0, max(x0 + 2, int(origin + until * scale))))
        if start is None:
            continue
        end = run.finished_at
        x0 = int(origin + start.timestamp() * scale)
        x1 = int(origin + (end.timestamp() if end is not None else now) * scale)
        key = late if run.late else status_key[run.status]
        spans = bars.get((lane, key))
        if spans is None:
            spans = bars[(lane, key)] = []
        spans.append((x0, x1 if x1 > x0 + 3 else x0 + 3))


def place_dues(
    stories: tuple[DueStory, ...],
    lane: int,
    origin: float,
    scale: float,
    kind_key: dict[DueKind, str],
    plain: str,
    error: str,
    ticks: dict[tuple[int, str], list[tuple[int, int]]],
) -> list[tuple[float, DueStory]]:
    """Each due's tick in pixels, and the row's positions for hit tests and the keyboard."""
    row: list[tuple[float, DueStory]] = []
    for story in stories:
        run = story.run
        due = run.due
        assert due is not None
        at = int(origin + due.timestamp() * scale)
        row.append((float(at), story))
        key = kind_key[story.kind]
        if key is plain and run.status in FAILURES:
            key = error
        spans = ticks.get((lane, key))
        if spans is None:
            spans = ticks[(lane, key)] = []
        spans.append((at - 1, at + 1))
    return row


def merged(spans: list[tuple[int, int]], low: int, high: int) -> list[tuple[int, int]]:
    """Pixel intervals that touch, overlap or lie a pixel apart, as one, kept between ``low``
    and ``high``: runs a minute apart on a week's strip are one bar, painted once (a one-pixel
    gap between them would not be seen, only paid for)."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        left, right = max(first, low), min(last, high)
        if right <= left:
            continue
        if merged and left <= merged[-1][1] + 1:
            if right > merged[-1][1]:
                merged[-1] = (merged[-1][0], right)
        else:
            merged.append((left, right))
    return merged
