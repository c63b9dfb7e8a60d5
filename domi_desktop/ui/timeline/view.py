"""The Timeline strip, painted with QPainter: a row for the machine (awake, asleep, off) and a
row per schedule with its dues (ticks), its runs (bars in History's colours) and its waits.

Everything that depends on the size and the data is laid out once (``layout``: the lanes' bars
and ticks as one image of colour indices) and painted into a picture, so a week of 10,000 runs
paints first in a few batched calls and repaints as one copy. The focused due moves with the
arrow keys (left/right along a row, up/down to the nearest due of the next row); Enter or a click
opens its run in History (``run_activated``).
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import datetime, timedelta

from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFocusEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from domi_desktop.story import SpanKind
from domi_desktop.story.dues import DueStory, Timeline
from domi_desktop.ui.history.dues import due_words
from domi_desktop.ui.i18n import register, tr, weekdays
from domi_desktop.ui.palette import colors
from domi_desktop.ui.timeline.layout import (
    HEADER,
    MACHINE_ROW,
    NAMES_WIDTH,
    ROW,
    Inks,
    Shapes,
    lay_out,
)

__all__ = ["HEADER", "MACHINE_ROW", "NAMES_WIDTH", "ROW", "TimelineView"]

HIT = 7.0
"""Pixels around a due within which the pointer is on it."""

ASLEEP = QColor(70, 96, 200, 110)
OFF = QColor(150, 150, 150, 150)
WINDOW_ALPHA = 64
"""A window's band: the selection colour, light enough that the bars over it read as before."""
PAUSED = QColor(230, 160, 40, 90)
"""A "Pause all" band: amber, distinct from sleep (blue) and no app (hatched)."""

register(
    "zh",
    {
        "This machine": "本机",
        "No schedules.": "没有计划。",
    },
)


class TimelineView(QWidget):
    run_activated = Signal(int)
    """A due was chosen (Enter, a click): its run's id, for History."""
    focus_moved = Signal(str)
    """The focused due's line (the same words as its tooltip and History's)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timelineView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self._data: Timeline | None = None
        self._shapes: Shapes | None = None
        self._focus: tuple[int, int] | None = None
        self._words: dict[int, str] = {}
        """Run id -> its due's line, worded once per language (``texts_changed`` clears it)."""

    # -- what callers use ----------------------------------------------------------------------

    @property
    def data(self) -> Timeline | None:
        """What is drawn: the store's stretch, the dues of its pauses folded into them."""
        return self._data

    def set_data(self, data: Timeline) -> None:
        focused = self.focused()
        self._data = data.paused_folded()
        self._shapes = None
        self._words = {}
        self._focus = None
        if focused is not None:
            self.focus_run(focused.run.id)
        self.updateGeometry()
        self.update()

    def texts_changed(self) -> None:
        self._words = {}
        self.update()

    def words_for(self, story: DueStory) -> str:
        line = self._words.get(story.run.id)
        if line is None:
            line = self._words[story.run.id] = due_words(story)
        return line

    def focused(self) -> DueStory | None:
        if self._data is None or self._focus is None:
            return None
        lane, index = self._focus
        return self._data.lanes[lane].stories[index]

    def focus_run(self, run_id: int) -> bool:
        if self._data is None:
            return False
        for lane_index, lane in enumerate(self._data.lanes):
            for index, story in enumerate(lane.stories):
                if story.run.id == run_id:
                    self._set_focus(lane_index, index)
                    return True
        return False

    def due_at(self, point: QPointF) -> DueStory | None:
        """The due under ``point`` (within ``HIT`` pixels), if any."""
        shapes = self._laid_out()
        lane = self._lane_at(point.y())
        if shapes is None or lane is None:
            return None
        xs = shapes.dues[lane]
        at = bisect_left(xs, point.x())
        near = [i for i in (at - 1, at) if 0 <= i < len(xs)]
        if not near:
            return None
        best = min(near, key=lambda i: abs(xs[i] - point.x()))
        if abs(xs[best] - point.x()) > HIT:
            return None
        return self._data.lanes[lane].stories[best] if self._data is not None else None

    def x_of(self, moment: datetime) -> float:
        data = self._data
        assert data is not None
        span = (data.end - data.start).total_seconds()
        width = max(1.0, self.width() - NAMES_WIDTH - 8.0)
        share = (moment - data.start).total_seconds() / span
        return NAMES_WIDTH + min(max(share, -0.01), 1.01) * width

    def lane_top(self, lane: int) -> float:
        return HEADER + MACHINE_ROW + 6 + lane * ROW

    def sizeHint(self) -> QSize:
        lanes = 0 if self._data is None else len(self._data.lanes)
        return QSize(1180, int(self.lane_top(lanes)) + 30)

    def minimumSizeHint(self) -> QSize:
        return QSize(640, int(self.lane_top(min(2, len(self._data.lanes) if self._data else 0))))

    # -- Qt events -----------------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._shapes = None
        super().resizeEvent(event)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        moves = {
            Qt.Key.Key_Left: (0, -1),
            Qt.Key.Key_Right: (0, 1),
            Qt.Key.Key_Up: (-1, 0),
            Qt.Key.Key_Down: (1, 0),
        }
        if key in moves:
            self._move(*moves[key])
        elif key in (Qt.Key.Key_Home, Qt.Key.Key_End):
            self._to_end(key is Qt.Key.Key_End)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            story = self.focused()
            if story is not None:
                self.run_activated.emit(story.run.id)
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        if self._focus is None:
            self._to_end(False)
        super().focusInEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        story = self.due_at(event.position())
        if story is None or event.button() is not Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        self.focus_run(story.run.id)
        self.run_activated.emit(story.run.id)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            story = self.due_at(QPointF(event.pos()))
            if story is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.words_for(story), self)
            return True
        return super().event(event)

    # -- keyboard ------------------------------------------------------------------------------

    def _set_focus(self, lane: int, index: int) -> None:
        self._focus = (lane, index)
        story = self.focused()
        if story is not None:
            line = self.words_for(story)
            self.setAccessibleDescription(line)
            self.focus_moved.emit(line)
        self.update()

    def _to_end(self, last: bool) -> None:
        if self._data is None:
            return
        lanes = [i for i, lane in enumerate(self._data.lanes) if lane.stories]
        if lanes:
            lane = lanes[-1] if last else lanes[0]
            self._set_focus(lane, len(self._data.lanes[lane].stories) - 1 if last else 0)

    def _move(self, down: int, right: int) -> None:
        data = self._data
        if data is None:
            return
        if self._focus is None:
            self._to_end(False)
            return
        lane, index = self._focus
        if right:
            stories = data.lanes[lane].stories
            self._set_focus(lane, min(max(index + right, 0), len(stories) - 1))
            return
        due = data.lanes[lane].stories[index].due
        target = lane + down
        while 0 <= target < len(data.lanes) and not data.lanes[target].stories:
            target += down
        if not 0 <= target < len(data.lanes):
            return
        stories = data.lanes[target].stories
        nearest = min(range(len(stories)), key=lambda i: abs(stories[i].due - due))
        self._set_focus(target, nearest)

    # -- layout and paint ----------------------------------------------------------------------

    def _lane_at(self, y: float) -> int | None:
        if self._data is None or y < self.lane_top(0):
            return None
        lane = int((y - self.lane_top(0)) // ROW)
        return lane if lane < len(self._data.lanes) else None

    def _laid_out(self) -> Shapes | None:
        if self._data is None:
            return None
        if self._shapes is None:
            self._shapes = self._layout(self._data)
        return self._shapes

    def _layout(self, data: Timeline) -> Shapes:
        palette, shades = self.palette(), colors(self.palette())
        inks = Inks(
            ok=palette.color(QPalette.ColorRole.Highlight).name(),
            late=shades.late.name(),
            muted=shades.muted.name(),
            error=shades.error.name(),
            plain=palette.color(QPalette.ColorRole.WindowText).name(),
        )
        shapes = lay_out(data, self.width(), inks)
        shapes.picture = self._picture(data, shapes)
        return shapes

    def _picture(self, data: Timeline, shapes: Shapes) -> QPixmap:
        ratio = self.devicePixelRatioF()
        picture = QPixmap(int(self.width() * ratio), int(self.height() * ratio))
        picture.setDevicePixelRatio(ratio)
        picture.fill(self.palette().color(QPalette.ColorRole.Base))
        painter = QPainter(picture)
        try:
            self._paint_static(painter, data, shapes)
        finally:
            painter.end()
        return picture

    def _paint(self, painter: QPainter) -> None:
        data = self._data
        if data is None:
            return
        shapes = self._laid_out()
        assert shapes is not None and shapes.picture is not None
        painter.drawPixmap(0, 0, shapes.picture)
        story = self.focused()
        if story is not None and self._focus is not None:
            at = self.x_of(story.due)
            top = self.lane_top(self._focus[0])
            pen = QPen(self.palette().color(QPalette.ColorRole.Highlight), 2)
            pen.setStyle(Qt.PenStyle.SolidLine if self.hasFocus() else Qt.PenStyle.DotLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(at - 5, top + 1, 10, ROW - 2))

    def _paint_static(self, painter: QPainter, data: Timeline, shapes: Shapes) -> None:
        text = self.palette().color(QPalette.ColorRole.WindowText)
        bottom = self.lane_top(len(data.lanes))
        painter.setPen(Qt.PenStyle.NoPen)
        for span in data.spans:  # behind everything, across every row
            if span.kind is SpanKind.awake:
                continue
            left, right = self.x_of(max(span.start, data.start)), self.x_of(min(span.end, data.end))
            if right <= left:
                continue
            whole = QRectF(left, HEADER, max(1.0, right - left), bottom - HEADER)
            if span.kind is SpanKind.asleep:
                painter.setBrush(ASLEEP)
            else:
                painter.setBrush(QBrush(OFF, Qt.BrushStyle.BDiagPattern))
            painter.drawRect(whole)
        for pause in data.pauses:  # one band across every row, its dues counted in it
            end = data.now if pause.end is None else pause.end
            left, right = self.x_of(max(pause.start, data.start)), self.x_of(min(end, data.end))
            if right > left:
                painter.setBrush(PAUSED)
                painter.drawRect(QRectF(left, HEADER, max(1.0, right - left), bottom - HEADER))
        self._paint_grid(painter, data, text)
        self._paint_bands(painter, shapes)
        painter.drawImage(0, int(self.lane_top(0)), shapes.strip)  # bars, waits and ticks
        self._paint_machine_row(painter, data, text)
        self._paint_names(painter, data, text)

    def _paint_bands(self, painter: QPainter, shapes: Shapes) -> None:
        """Each windowed lane's nights, a light band under its runs and marks."""
        band = QColor(self.palette().color(QPalette.ColorRole.Highlight))
        band.setAlpha(WINDOW_ALPHA)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(band)
        for index, spans in enumerate(shapes.bands):
            top = self.lane_top(index)
            for left, right in spans:
                painter.drawRect(QRectF(left, top + 1, max(1, right - left), ROW - 2))

    def _paint_grid(self, painter: QPainter, data: Timeline, text: QColor) -> None:
        grid = QColor(text)
        grid.setAlpha(40)
        painter.setPen(QPen(grid, 1))
        bottom = self.lane_top(len(data.lanes))
        days = max(1, round((data.end - data.start) / timedelta(days=1)))
        step = timedelta(hours=3) if days == 1 else timedelta(days=1)
        marks, moment = [], data.start
        while moment <= data.end:
            marks.append(moment)
            moment += step
        for index in range(len(data.lanes) + 1):
            y = self.lane_top(index)
            painter.drawLine(QLineF(NAMES_WIDTH, y, self.width(), y))
        names = weekdays()
        for mark in marks:
            at = self.x_of(mark)
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QLineF(at, HEADER - 4, at, bottom))
            if mark >= data.end:
                continue
            local = mark.astimezone(data.start.tzinfo)
            label = f"{local:%H:%M}" if days == 1 else f"{names[local.weekday()]} {local:%m-%d}"
            painter.setPen(text)
            painter.drawText(QRectF(at + 4, 6, 140, HEADER - 10), label)
        now = self.x_of(data.now)
        if NAMES_WIDTH < now < self.width():
            painter.setPen(QPen(colors(self.palette()).error, 1, Qt.PenStyle.DashLine))
            painter.drawLine(QLineF(now, HEADER - 4, now, bottom))

    def _paint_machine_row(self, painter: QPainter, data: Timeline, text: QColor) -> None:
        top = HEADER + 2
        painter.setPen(text)
        painter.drawText(
            QRectF(8, top, NAMES_WIDTH - 12, MACHINE_ROW),
            Qt.AlignmentFlag.AlignVCenter,
            tr("This machine"),
        )
        for span in data.spans:
            left = self.x_of(max(span.start, data.start))
            right = self.x_of(min(span.end, data.end))
            if right <= left:
                continue
            band = QRectF(left, top + 6, right - left, MACHINE_ROW - 12)
            painter.setPen(Qt.PenStyle.NoPen)
            if span.kind is SpanKind.asleep:
                painter.setBrush(QColor(70, 96, 200))
            elif span.kind is SpanKind.off:
                painter.setBrush(QBrush(QColor(150, 150, 150), Qt.BrushStyle.BDiagPattern))
            else:
                painter.setBrush(QColor(90, 170, 110))
            painter.drawRect(band)
        for pause in data.pauses:  # over the machine's own band: paused while awake
            end = data.now if pause.end is None else pause.end
            left, right = self.x_of(max(pause.start, data.start)), self.x_of(min(end, data.end))
            if right > left:
                painter.setBrush(QColor(PAUSED.red(), PAUSED.green(), PAUSED.blue()))
                painter.drawRect(QRectF(left, top + 6, max(2.0, right - left), MACHINE_ROW - 12))

    def _paint_names(self, painter: QPainter, data: Timeline, text: QColor) -> None:
        painter.setPen(text)
        metrics = self.fontMetrics()
        if not data.lanes:
            painter.drawText(QRectF(8, self.lane_top(0), 400, ROW), tr("No schedules."))
        for index, lane in enumerate(data.lanes):
            name = metrics.elidedText(lane.name, Qt.TextElideMode.ElideRight, NAMES_WIDTH - 14)
            painter.drawText(
                QRectF(8, self.lane_top(index), NAMES_WIDTH - 12, ROW),
                Qt.AlignmentFlag.AlignVCenter,
                name,
            )
