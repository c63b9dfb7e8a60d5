"""The Timeline window: a day or a week of the machine's story and every schedule's dues, with
the focused due's line under it. Its own window (from the tray menu and the Schedules window), not
a tab of History: a week strip needs the whole width that History's table and filters take, its
own navigation (day or week, earlier, later), and clicking a due opens History beside it on that
run, so the picture and the record can be read side by side."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import Enum

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.cron import local_zone
from domi_desktop.errors import DomiError
from domi_desktop.ui.history.dues import pause_words
from domi_desktop.ui.i18n import register, tr
from domi_desktop.ui.screen_fit import fit_to_screen
from domi_desktop.ui.timeline.data import TimelineReader
from domi_desktop.ui.timeline.view import TimelineView

REFRESH_MS = 60_000
"""How often an open Timeline reads the store again (the scheduler wakes a minute apart too)."""
CHANGED_MS = 1_000
"""How long after a run changed an open Timeline reads again: a catch-up's burst is one read."""

register(
    "zh",
    {
        "Timeline — domi-desktop": "时间线 — domi-desktop",
        "Week": "周",
        "Last 7 days": "最近 7 天",
        "Day": "日",
        "Earlier": "更早",
        "Today": "今天",
        "Later": "更晚",
        "Arrows move between dues; Enter opens the run in History.": (
            "方向键在各次应运行之间移动；回车在历史中打开该次运行。"
        ),
        "Green: awake · blue: asleep · hatched: domi-desktop not running · ticks: dues · bars: "
        "runs · light band: a schedule's hours": (
            "绿色：唤醒 · 蓝色：睡眠 · 斜线：domi-desktop 未运行 · 刻度：应运行时间 · 条：运行 · "
            "浅色带：计划的时段"
        ),
    },
)


class Span(Enum):
    """What the Timeline shows: a calendar week from Monday, the seven days to today, a day."""

    week = 7
    day = 1
    last_days = -7

    @property
    def days(self) -> int:
        return abs(self.value)


def day_start(moment: datetime) -> datetime:
    """Midnight of ``moment``'s local day, in the local zone."""
    try:
        zone = local_zone()
    except DomiError:
        zone = UTC
    local = moment.astimezone(zone)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


class TimelineWindow(QWidget):
    def __init__(
        self,
        store: TimelineReader,
        open_run: Callable[[int], object],
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("timelineWindow")
        fit_to_screen(self, QSize(1200, 640))
        self._store = store
        self._now = now
        self._span = Span.week
        self._days = self._span.days
        self._start = self._period_start(now())
        self._following = True
        """The period shown is the one with today in it: it moves on with today (a midnight,
        a wake days later), until the person goes to another."""
        self.view = TimelineView()
        self.view.run_activated.connect(open_run)
        self.view.focus_moved.connect(self._show_line)
        self.span_choice = QComboBox()
        self.span_choice.setObjectName("timelineSpan")
        for span in Span:
            self.span_choice.addItem("", span)
        self.earlier = QPushButton()
        self.today = QPushButton()
        self.later = QPushButton()
        self.range_label = QLabel()
        self.range_label.setObjectName("timelineRange")
        self.line = QLabel()
        self.line.setObjectName("timelineDue")
        self.line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.legend = QLabel()
        self.legend.setObjectName("timelineLegend")
        self.paused = QLabel()
        self.paused.setObjectName("timelinePauses")
        self.paused.hide()
        scroll = QScrollArea()
        scroll.setWidget(self.view)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        bar = QHBoxLayout()
        for widget in (self.span_choice, self.earlier, self.today, self.later):
            bar.addWidget(widget)
        bar.addSpacing(12)
        bar.addWidget(self.range_label, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.line)
        layout.addWidget(self.paused)
        layout.addWidget(self.legend)
        self.span_choice.currentIndexChanged.connect(self._span_changed)
        self.earlier.clicked.connect(lambda: self.go(-1))
        self.later.clicked.connect(lambda: self.go(1))
        self.today.clicked.connect(self.go_today)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(CHANGED_MS)
        self._soon.timeout.connect(self.refresh)
        self.retranslate()
        self.refresh()

    # -- what callers use ----------------------------------------------------------------------

    def show_period(self, start: datetime, days: int) -> None:
        self._set_span(Span.week if days == 7 else Span.day)
        self._start = start
        self._following = self._start == self._period_start(self._now())
        self.refresh()

    def show_span(self, span: Span) -> None:
        """The period of ``span`` with today in it."""
        self._set_span(span)
        self.go_today()

    def go(self, steps: int) -> None:
        self._start = day_start(self._start + timedelta(days=self._days * steps, hours=12))
        self._following = self._start == self._period_start(self._now())
        self.refresh()

    def go_today(self) -> None:
        self._following = True
        self.refresh()

    def runs_changed(self) -> None:
        """Runs started, ended or were skipped: read again shortly, once for a whole burst, and
        only while the window is shown (its next showing reads anyway)."""
        if self.isVisible() and not self._soon.isActive():
            self._soon.start()

    def refresh(self) -> None:
        if self._following:
            self._start = self._period_start(self._now())
        end = day_start(self._start + timedelta(days=self._days, hours=12))
        self.view.set_data(self._store.timeline(self._start, end, self._now()))
        self._show_range(end)
        self._show_pauses()

    def _show_pauses(self) -> None:
        """The amber bands in words: each pause of the period, its dues counted in it."""
        data = self.view.data
        lines = [pause_words(pause) for pause in data.pauses] if data is not None else []
        self.paused.setText("\n".join(lines))
        self.paused.setVisible(bool(lines))

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Timeline — domi-desktop"))
        names = {Span.week: "Week", Span.last_days: "Last 7 days", Span.day: "Day"}
        for index, span in enumerate(Span):
            self.span_choice.setItemText(index, tr(names[span]))
        self.earlier.setText(tr("Earlier"))
        self.today.setText(tr("Today"))
        self.later.setText(tr("Later"))
        self.legend.setText(
            tr(
                "Green: awake · blue: asleep · hatched: domi-desktop not running · ticks: dues · "
                "bars: runs · light band: a schedule's hours"
            )
        )
        self._show_pauses()
        story = self.view.focused()
        self.view.texts_changed()
        if story is not None:
            self._show_line(self.view.words_for(story))
        else:
            self.line.setText(tr("Arrows move between dues; Enter opens the run in History."))
        self._show_range(day_start(self._start + timedelta(days=self._days, hours=12)))

    # -- Qt events -----------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        self.refresh()
        self._timer.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        self._soon.stop()  # a hidden window reads nothing (its store may be closing)
        super().hideEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()

    # -- internals -----------------------------------------------------------------------------

    def _period_start(self, moment: datetime) -> datetime:
        start = day_start(moment)
        back = {Span.week: start.weekday(), Span.last_days: 6, Span.day: 0}[self._span]
        # Noon, then back to midnight: a day of 23 or 25 hours (a clock change) lands right.
        return day_start(start - timedelta(days=back) + timedelta(hours=12)) if back else start

    def _set_span(self, span: Span) -> None:
        self._span, self._days = span, span.days
        self.span_choice.blockSignals(True)
        self.span_choice.setCurrentIndex(list(Span).index(span))
        self.span_choice.blockSignals(False)

    def _span_changed(self) -> None:
        span = self.span_choice.currentData()
        assert isinstance(span, Span)
        self._span, self._days = span, span.days
        focused = self.view.focused()  # a day: the focused due's
        if focused is not None:
            self._start = self._period_start(focused.due)
            self._following = self._start == self._period_start(self._now())
        elif not self._following:
            self._start = self._period_start(self._start)
        self.refresh()

    def _show_range(self, end: datetime) -> None:
        last = end - timedelta(seconds=1)
        self.range_label.setText(f"{self._start:%Y-%m-%d} – {last:%Y-%m-%d}")

    def _show_line(self, line: str) -> None:
        self.line.setText(line)
