"""The Timeline's layout in whole pixels, worked out once per data and size (``view`` paints it).

A week of 10,000 runs is more runs than the strip has pixel columns, so its bars and ticks are not
kept as rectangles: each lane's runs, waits and dues are marked in a byte per pixel column and
``Mark``, and the marks become one 8-bit image (a colour index per pixel) that is painted in a
single call. Where marks share a column, ``Mark``'s order decides which is seen.
Every run still passes through a plain Python loop here, so the loops touch no Qt object and no
enum's hash (``Enum.__hash__`` is Python code; ``is`` is not): this is the first paint's bulk."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import IntEnum

from PySide6.QtGui import QColor, QImage, QPixmap

from domi_desktop.cron import zone_for
from domi_desktop.errors import ZoneError
from domi_desktop.model import Run, RunStatus
from domi_desktop.scheduler.window import occurrence
from domi_desktop.story.dues import DueKind, DueStory, Lane, Timeline
from domi_desktop.ui.history.texts import FAILURES

NAMES_WIDTH = 170
HEADER = 34
ROW = 42
MACHINE_ROW = 26
BAR = 14
TICK = 10
BAR_TOP = ROW // 2 - BAR // 2 + 4
"""A run's bar, from its lane's top."""
TICK_TOP = 3
"""A due's tick, from its lane's top."""
MIN_BAR = 3
"""A run shorter than this many pixels is drawn this wide, so a minute's run is seen."""

WAITED = "started after waiting"
"""How the gates' words on a run that waited begin (``runtime.gates``)."""


class Mark(IntEnum):
    """What a lane shows in a pixel column, in the order they are painted, each over the ones
    before. A week's strip puts a dozen runs of a minutely job in one column, and a user opens
    the timeline to find what went wrong: so the worse a mark, the later it is painted, and the
    routine (runs that succeeded, dues on time) lies under everything and hides nothing. Where
    marks share a column this order alone decides, never the order of the runs."""

    ran = 0
    """Succeeded, or still running; a due that ran on time."""
    waited = 1
    """The span a run waited (or still waits) before it started, hatched: over the runs around
    it, whose colour shows through the hatch."""
    skipped = 2
    """Nothing ran: a skipped run, a missed or skipped due (grey; the sleep band says why)."""
    late = 3
    """It ran, not as planned: late, or after a wait; a run that still waits (amber)."""
    interrupted = 4
    """Cut short: History's amber too, but a bad outcome, so over the late ones."""
    failed = 5
    """Failed or timed out (red): what the timeline is opened for, over everything."""


_STATUS_MARKS = {
    RunStatus.running: Mark.ran,
    RunStatus.succeeded: Mark.ran,
    RunStatus.skipped: Mark.skipped,
    RunStatus.waiting: Mark.late,
    RunStatus.interrupted: Mark.interrupted,
    **dict.fromkeys(FAILURES, Mark.failed),
}
_KIND_MARKS = {
    DueKind.on_time: Mark.ran,
    DueKind.missed: Mark.skipped,
    DueKind.skipped: Mark.skipped,
    DueKind.late: Mark.late,
    DueKind.waited: Mark.late,
    DueKind.waiting: Mark.late,
}
_FAILED = tuple(FAILURES)
"""A tuple, not the set: ``in`` finds its members by identity, without hashing an enum."""


@dataclass(frozen=True)
class Inks:
    """The colours (``QColor.name()``) of the strip's meanings, from the palette shown."""

    ok: str
    late: str
    muted: str
    error: str
    plain: str
    """A due that ran on time."""

    def table(self) -> list[str]:
        """A bar's colour per mark (History's colours), then a due's tick's."""
        bars = {
            Mark.ran: self.ok,
            Mark.waited: self.late,
            Mark.skipped: self.muted,
            Mark.late: self.late,
            Mark.interrupted: self.late,
            Mark.failed: self.error,
        }
        return [bars[mark] for mark in Mark] + [
            self.plain if mark is Mark.ran else bars[mark] for mark in Mark
        ]


@dataclass
class Shapes:
    """What a paint draws: the lanes' bars, waits and ticks as one image, the dues' places."""

    strip: QImage
    """The lanes' ticks, bars and waits from the first lane's top down, transparent between."""
    dues: list[list[int]]
    """Per lane, its dues' x in order (hit tests and keyboard moves)."""
    picture: QPixmap | None = None
    """Everything but the focus, painted once per layout."""
    bands: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per lane, its window's nights as ``(left, right)`` x, clipped to the strip."""


Marks = list[bytearray | None]
"""A lane's marks, by ``Mark``: a byte per pixel column, 1 where the mark is drawn."""


def lay_out(data: Timeline, width: int, inks: Inks) -> Shapes:
    """Bars, ticks and waits of ``data`` on a view ``width`` pixels wide."""
    span = max(1.0, width - NAMES_WIDTH - 8.0)
    low, high = NAMES_WIDTH, NAMES_WIDTH + int(span) + 1
    scale = span / (data.end - data.start).total_seconds()
    origin = NAMES_WIDTH - data.start.timestamp() * scale  # x = origin + timestamp * scale
    columns = max(width, high + 2)  # a mark's extra pixel, on a view narrower than the names
    lanes = _Lanes(origin, scale, low, high, columns, data.now.timestamp())
    dues: list[list[int]] = []
    bars: list[Marks] = []
    ticks: list[Marks] = []
    bands: list[list[tuple[int, int]]] = []
    for lane in data.lanes:
        bars.append(lanes.runs(lane.runs))
        marks, places = lanes.dues(lane.stories)
        ticks.append(marks)
        dues.append(places)
        spans = window_spans(lane, data.start, data.end)
        placed = (
            (int(origin + a.timestamp() * scale), int(origin + b.timestamp() * scale))
            for a, b in spans
        )
        bands.append([(max(x0, low), min(x1, high)) for x0, x1 in placed if x1 > low and x0 < high])
    return Shapes(_strip(bars, ticks, columns, inks.table()), dues, bands=bands)


def window_spans(lane: Lane, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The lane's window each night that touches [``start``, ``end``), as the scheduler takes
    it (its wall-clock edges in the schedule's zone, 7 h or 9 h across a DST change)."""
    if lane.window is None:
        return []
    try:
        zone = zone_for(lane.tz)
    except ZoneError:  # a row written by hand: its dues say what is wrong, the band is left out
        return []
    day = start.astimezone(zone).date() - timedelta(days=1)
    found: list[tuple[datetime, datetime]] = []
    while True:
        night = occurrence(lane.window, day, zone)
        if night.start >= end:
            return found
        if night.end > start and night.end > night.start:
            found.append((max(night.start, start), min(night.end, end)))
        day += timedelta(days=1)


class _Lanes:
    """Marks a lane's runs and dues. A mark runs a pixel past its right edge, so that shapes
    that touch or lie one pixel apart join (one pixel of gap is not seen on a week's strip);
    ``_row`` takes that pixel back. The loops compare ints and enums by identity: an enum's
    hash is Python code, and every run of the week passes here."""

    def __init__(
        self, origin: float, scale: float, low: int, high: int, columns: int, now: float
    ) -> None:
        self.origin, self.scale, self.low, self.high, self.now = origin, scale, low, high, now
        self.blank = bytes(columns)
        self.ones = b"\x01" * columns

    def runs(self, runs: tuple[Run, ...]) -> Marks:
        """Each run's bar, and its wait if it waited."""
        origin, scale, low, high, now = self.origin, self.scale, self.low, self.high, self.now
        ones = self.ones
        waiting, succeeded, status_marks = RunStatus.waiting, RunStatus.succeeded, _STATUS_MARKS
        ran, late = int(Mark.ran), int(Mark.late)
        until_now = int(origin + now * scale)
        marks: Marks = [None] * len(Mark)
        for run in runs:
            start, reason, status = run.started_at, run.reason, run.status
            if status is waiting or (reason is not None and reason.startswith(WAITED)):
                since = run.fired_at or run.due
                if since is not None:
                    x0 = int(origin + since.timestamp() * scale)
                    until = start.timestamp() if start is not None else now
                    x1 = int(origin + until * scale)
                    self._wait(marks, max(x0, low), min(max(x0 + 2, x1), high))
            if start is None:
                continue
            end = run.finished_at
            left = int(origin + start.timestamp() * scale)
            right = int(origin + end.timestamp() * scale) if end is not None else until_now
            if status is succeeded:  # the bulk: no enum hashed
                mark = late if run.late else ran
            else:  # History's colours: a late run is amber unless it failed
                mark = status_marks[status]
                mark = late if run.late and mark < late else mark
            right = right if right > left + MIN_BAR else left + MIN_BAR
            marked = marks[mark]
            if marked is None:
                marked = marks[mark] = bytearray(self.blank)
            left = left if left > low else low  # not max(): a call per run is dear here
            right = right if right < high else high
            if right > left:
                marked[left : right + 1] = ones[: right + 1 - left]
        return marks

    def _wait(self, marks: Marks, left: int, right: int) -> None:
        """A wait from ``left`` to ``right``, already clipped (a few per week: calls are fine)."""
        marked = marks[Mark.waited]
        if marked is None:
            marked = marks[Mark.waited] = bytearray(self.blank)
        if right > left:
            marked[left : right + 1] = self.ones[: right + 1 - left]

    def dues(self, stories: tuple[DueStory, ...]) -> tuple[Marks, list[int]]:
        """Each due's tick (two pixels wide, left of its moment), and its x."""
        origin, scale, low, high, ones = self.origin, self.scale, self.low, self.high, self.ones
        on_time, kind_marks = DueKind.on_time, _KIND_MARKS
        ran, failed = int(Mark.ran), int(Mark.failed)
        marks: Marks = [None] * len(Mark)
        places: list[int] = []
        for story in stories:
            run = story.run
            due = run.due
            assert due is not None
            at = int(origin + due.timestamp() * scale)
            places.append(at)
            kind = story.kind
            mark = (
                (failed if run.status in _FAILED else ran) if kind is on_time else kind_marks[kind]
            )
            marked = marks[mark]
            if marked is None:
                marked = marks[mark] = bytearray(self.blank)
            if low < at < high:
                marked[at - 1 : at + 2] = b"\x01\x01\x01"
            elif low <= at <= high:  # at an edge: the part inside
                left, right = max(at - 1, low), min(at + 1, high)
                marked[left : right + 1] = ones[: right + 1 - left]
        return marks, places


def _strip(bars: list[Marks], ticks: list[Marks], columns: int, table: list[str]) -> QImage:
    """The lanes' marks as one image of colour indices (0: transparent, then ``table``'s)."""
    stride = (columns + 3) // 4 * 4  # an 8-bit image's lines are 32-bit aligned
    blank = bytes(stride)
    # A wait is hatched as Qt's Dense4Pattern did it, where the widget's x + y is odd (the
    # strip's lines keep the widget's parity: it and its rows start at even y).
    odd = int.from_bytes(b"\x00\x01" * (stride // 2), "little")
    hatches = (odd, odd << 8)  # a bar's even lines, its odd ones
    lines: list[bytes] = []
    for lane_bars, lane_ticks in zip(bars, ticks, strict=True):
        tick_row = _row(lane_ticks, 1 + len(Mark), 0, stride)
        bar_rows = [_row(lane_bars, 1, hatch, stride) for hatch in hatches]
        lines += [blank] * TICK_TOP + [tick_row] * TICK
        lines += [blank] * (BAR_TOP - TICK_TOP - TICK)
        lines += [bar_rows[line % 2] for line in range(BAR)]
        lines += [blank] * (ROW - BAR_TOP - BAR)
    strip = QImage(columns, max(1, len(lines)), QImage.Format.Format_Indexed8)
    strip.setColorTable([0] + [QColor(ink).rgba() for ink in table])
    pixels = strip.bits()  # the image's own memory, written in place
    assert isinstance(pixels, memoryview)
    if lines:
        pixels[:] = b"".join(lines)
    else:
        strip.fill(0)
    return strip


def _row(marks: Marks, first: int, hatch: int, stride: int) -> bytes:
    """A line of colour indices (``first`` for the first mark) from a lane's marks, each mark
    over the ones before (``Mark``'s order), a wait only where ``hatch`` is set. Done on the
    whole line at once as integers of a byte per pixel (no carry crosses a byte): a pixel is
    painted where its mark and the next pixel's are both set, which takes back the pixel that
    each mark ran past its right edge."""
    row = 0
    for mark, marked in enumerate(marks):
        if marked is None:
            continue
        bits = int.from_bytes(marked, "little")
        painted = bits & (bits >> 8)
        if mark == Mark.waited:
            painted &= hatch
        row = (row & ~(painted * 0xFF)) | painted * (first + mark)
    return row.to_bytes(stride, "little")
