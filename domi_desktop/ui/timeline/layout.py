"""The Timeline's layout in whole pixels, worked out once per data and size (``view`` paints it).

A week of 10,000 runs is more runs than the strip has pixel columns, so its bars and ticks are not
kept as rectangles: each lane's runs and dues are marked in a byte per pixel column and colour,
and the marks become one 8-bit image (a colour index per pixel) that is painted in a single call.
Every run still passes through a plain Python loop here, so the loops touch no Qt object and no
enum's hash (``Enum.__hash__`` is Python code; ``is`` is not): this is the first paint's bulk."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QImage, QPixmap

from domi_desktop.model import Run, RunStatus
from domi_desktop.story.dues import DueKind, DueStory, Timeline
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


@dataclass
class Shapes:
    """What a paint draws: the lanes' bars and ticks as one image, the waits, the dues' places."""

    strip: QImage
    """The lanes' ticks and bars from the first lane's top down, transparent between them."""
    waits: set[tuple[int, int, int]]
    """(lane, left, right) in pixels: a run waiting, or that waited, before it started."""
    dues: list[list[int]]
    """Per lane, its dues' x in order (hit tests and keyboard moves)."""
    picture: QPixmap | None = None
    """Everything but the focus, painted once per layout."""


def lay_out(data: Timeline, width: int, inks: Inks) -> Shapes:
    """Bars, ticks and waits of ``data`` on a view ``width`` pixels wide."""
    span = max(1.0, width - NAMES_WIDTH - 8.0)
    low, high = NAMES_WIDTH, NAMES_WIDTH + int(span) + 1
    scale = span / (data.end - data.start).total_seconds()
    origin = NAMES_WIDTH - data.start.timestamp() * scale  # x = origin + timestamp * scale
    columns = max(width, high + 2)  # a mark's extra pixel, on a view narrower than the names
    lanes = _Lanes(origin, scale, low, high, columns, inks, data.now.timestamp())
    waits: set[tuple[int, int, int]] = set()
    dues: list[list[int]] = []
    bars: list[dict[str, bytearray]] = []
    ticks: list[dict[str, bytearray]] = []
    for index, lane in enumerate(data.lanes):
        bars.append(lanes.runs(lane.runs, index, waits))
        marks, places = lanes.dues(lane.stories)
        ticks.append(marks)
        dues.append(places)
    return Shapes(_strip(bars, ticks, columns), waits, dues)


class _Lanes:
    """Marks a lane's runs and dues: per colour, a byte per pixel column, 1 where one is drawn.
    A mark runs a pixel past its right edge, so that shapes that touch or lie one pixel apart
    join (one pixel of gap is not seen on a week's strip); ``_strip`` takes that pixel back."""

    def __init__(
        self,
        origin: float,
        scale: float,
        low: int,
        high: int,
        columns: int,
        inks: Inks,
        now: float,
    ) -> None:
        self.origin, self.scale, self.low, self.high, self.now = origin, scale, low, high, now
        self.inks = inks
        self.blank = bytes(columns)
        self.ones = b"\x01" * columns
        self.status_inks = {status: inks.ok for status in RunStatus}
        self.status_inks.update({status: inks.error for status in FAILURES})
        self.status_inks.update({RunStatus.interrupted: inks.late, RunStatus.waiting: inks.late})
        self.status_inks[RunStatus.skipped] = inks.muted
        self.kind_inks = {kind: inks.plain for kind in DueKind}
        self.kind_inks.update({DueKind.missed: inks.muted, DueKind.skipped: inks.muted})
        self.kind_inks.update(
            {DueKind.late: inks.late, DueKind.waited: inks.late, DueKind.waiting: inks.late}
        )

    def runs(
        self, runs: tuple[Run, ...], lane: int, waits: set[tuple[int, int, int]]
    ) -> dict[str, bytearray]:
        """Each run's bar by colour, and its wait (if it waited) into ``waits``."""
        origin, scale, low, high, now = self.origin, self.scale, self.low, self.high, self.now
        ones, status_inks, late = self.ones, self.status_inks, self.inks.late
        waiting, succeeded, ok = RunStatus.waiting, RunStatus.succeeded, self.inks.ok
        until_now = int(origin + now * scale)
        marks: dict[str, bytearray] = {}
        for run in runs:
            start, reason, status = run.started_at, run.reason, run.status
            if status is waiting or (reason is not None and reason.startswith(WAITED)):
                since = run.fired_at or run.due
                if since is not None:
                    x0 = int(origin + since.timestamp() * scale)
                    until = start.timestamp() if start is not None else now
                    waits.add((lane, x0, max(x0 + 2, int(origin + until * scale))))
            if start is None:
                continue
            end = run.finished_at
            left = int(origin + start.timestamp() * scale)
            right = int(origin + end.timestamp() * scale) if end is not None else until_now
            right = right if right > left + MIN_BAR else left + MIN_BAR
            ink = late if run.late else ok if status is succeeded else status_inks[status]
            mark = marks.get(ink)  # before the clip: a colour's place in the order is kept
            if mark is None:
                mark = marks[ink] = bytearray(self.blank)
            left = left if left > low else low  # not max(): a call per run is dear here
            right = right if right < high else high
            if right > left:
                mark[left : right + 1] = ones[: right + 1 - left]
        return marks

    def dues(self, stories: tuple[DueStory, ...]) -> tuple[dict[str, bytearray], list[int]]:
        """Each due's tick by colour (two pixels wide, left of its moment), and its x."""
        origin, scale, low, high, ones = self.origin, self.scale, self.low, self.high, self.ones
        kind_inks, on_time = self.kind_inks, DueKind.on_time
        plain, error = self.inks.plain, self.inks.error
        marks: dict[str, bytearray] = {}
        places: list[int] = []
        for story in stories:
            run = story.run
            due = run.due
            assert due is not None
            at = int(origin + due.timestamp() * scale)
            places.append(at)
            kind = story.kind
            ink = (
                (error if run.status in _FAILED else plain) if kind is on_time else kind_inks[kind]
            )
            mark = marks.get(ink)
            if mark is None:
                mark = marks[ink] = bytearray(self.blank)
            if low < at < high:
                mark[at - 1 : at + 2] = b"\x01\x01\x01"
            elif low <= at <= high:  # at an edge: the part inside
                left, right = max(at - 1, low), min(at + 1, high)
                mark[left : right + 1] = ones[: right + 1 - left]
        return marks, places


def _strip(
    bars: list[dict[str, bytearray]], ticks: list[dict[str, bytearray]], columns: int
) -> QImage:
    """The lanes' marks as one image of colour indices (0: transparent). Where colours overlap,
    the one first met (lane by lane, run by run) is painted first and the later on top."""
    bar_inks = list(dict.fromkeys(ink for marks in bars for ink in marks))
    tick_inks = list(dict.fromkeys(ink for marks in ticks for ink in marks))
    table = list(dict.fromkeys(bar_inks + tick_inks))
    stride = (columns + 3) // 4 * 4  # an 8-bit image's lines are 32-bit aligned
    blank = bytes(stride)
    lines: list[bytes] = []
    for lane_bars, lane_ticks in zip(bars, ticks, strict=True):
        tick_row = _row(lane_ticks, tick_inks, table, stride)
        bar_row = _row(lane_bars, bar_inks, table, stride)
        lines += [blank] * TICK_TOP + [tick_row] * TICK
        lines += [blank] * (BAR_TOP - TICK_TOP - TICK) + [bar_row] * BAR
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


def _row(marks: dict[str, bytearray], order: list[str], table: list[str], stride: int) -> bytes:
    """A line of colour indices from a lane's marks, the colours in ``order``, each over the
    ones before. Done on the whole line at once as integers of a byte per pixel (no carry
    crosses a byte): a pixel is painted where its mark and the next pixel's are both set, which
    takes back the pixel that each mark ran past its right edge."""
    row = 0
    for ink in order:
        mark = marks.get(ink)
        if mark is None:
            continue
        marked = int.from_bytes(mark, "little")
        painted = marked & (marked >> 8)
        row = (row & ~(painted * 0xFF)) | painted * (table.index(ink) + 1)
    return row.to_bytes(stride, "little")
