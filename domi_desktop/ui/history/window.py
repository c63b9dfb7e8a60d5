"""The run history window: every run the store recorded, newest first, filterable, with each
run's details and log.

The table is paged (``PAGE_SIZE`` runs per read, more as the user scrolls), so a history of
100,000 runs opens as fast as one of ten. Ended runs are reported with ``run_changed``: at most a
few updates a second, each touching only the rows of the runs that changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, QSignalBlocker, QSize, Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.errors import NotFoundError
from domi_desktop.model import Run, RunStatus
from domi_desktop.ports import RunReader
from domi_desktop.story import Pause
from domi_desktop.ui.history.dues import due_words, pause_words, recent_pauses, story_of
from domi_desktop.ui.history.log import LogDialog
from domi_desktop.ui.history.model import Column, RunsModel
from domi_desktop.ui.history.rows import ShownRows
from domi_desktop.ui.history.texts import (
    STATUS_LABELS,
    exit_text,
    format_time,
    not_run,
    reason_text,
)
from domi_desktop.ui.i18n import register, tr
from domi_desktop.ui.screen_fit import fit_to_screen

UPDATE_INTERVAL_MS = 250
UPDATE_BATCH = 50
"""Changed runs read and shown at once; more wait for the next interval."""
COUNT_INTERVAL_MS = 1000
RESIZE_SAMPLE = 30
"""Rows measured when the columns are fitted to their contents."""
"""Ended runs are shown at most this often: a burst of a thousand costs a few repaints."""

register(
    "zh",
    {
        "Run {id} of “{schedule}”": "“{schedule}”的第 {id} 号运行",
        "fired {time}": "触发于 {time}",
        "due {time}": "应于 {time}",
        "waiting since {time}": "自 {time} 起等待",
        "finished {time}": "结束于 {time}",
        "exit code {code}": "退出码 {code}",
        "Select a run to see its details and open its log.": "选择一次运行以查看详情和日志。",
        "History — domi-desktop": "运行历史 — domi-desktop",
        "Schedule:": "计划：",
        "Status:": "状态：",
        "All schedules": "全部计划",
        "All": "全部",
        "Open log": "打开日志",
        "1 run": "1 次运行",
        "{count} runs": "{count} 次运行",
    },
)


class HistoryWindow(QWidget):
    """Filters, the runs table, the selected run's details and its log."""

    def __init__(self, store: RunReader, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("historyWindow")
        fit_to_screen(self, QSize(1040, 600))
        self._store = store
        self.model = RunsModel(store, self)
        self.rows = ShownRows(self.model, self)
        self._texts_stale = False
        """What the table shows: ``model``'s rows, held on the C++ side."""
        self._scroll_anchor: int | None = None
        self._changed: set[int] = set()
        self._missed: dict[int, tuple[int, int]] = {}
        """Fire's run id -> (schedule id, dues it recorded skipped), not shown yet."""
        self._count = 0
        self._pauses: list[Pause] = []
        self._update_timer = QTimer(self)
        self._update_timer.setSingleShot(True)
        self._update_timer.setInterval(UPDATE_INTERVAL_MS)
        self._update_timer.timeout.connect(self._apply_changes)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(COUNT_INTERVAL_MS)
        self._count_timer.timeout.connect(self._update_count)

        self.schedule_filter = QComboBox()
        self.schedule_filter.setObjectName("scheduleFilter")
        self.schedule_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        self.status_filter.addItem("", None)
        for status in STATUS_LABELS:
            self.status_filter.addItem("", status.value)
        self._fill_schedules()
        self.run_count = QLabel()
        self.run_count.setObjectName("runCount")
        self.pauses_line = QLabel()
        self.pauses_line.setObjectName("historyPauses")
        self.pauses_line.hide()

        self.table = QTableView()
        self.table.setObjectName("runsTable")
        self.table.setModel(self.rows)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        rows = self.table.verticalHeader()
        rows.hide()
        # Fixed, compact rows: no per-row height measuring, and more runs per screen.
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        columns = self.table.horizontalHeader()
        columns.setSectionResizeMode(Column.schedule, QHeaderView.ResizeMode.Stretch)
        columns.setResizeContentsPrecision(RESIZE_SAMPLE)  # Qt measures up to 1,000 by default
        self._fit_columns()

        self.details = QLabel()
        self.details.setObjectName("runDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_log_button = QPushButton()
        self.open_log_button.setObjectName("openLog")
        self._schedule_label = QLabel()
        self._status_label = QLabel()

        filters = QHBoxLayout()
        filters.addWidget(self._schedule_label)
        filters.addWidget(self.schedule_filter)
        filters.addSpacing(12)
        filters.addWidget(self._status_label)
        filters.addWidget(self.status_filter)
        filters.addStretch(1)
        filters.addWidget(self.run_count)
        footer = QHBoxLayout()
        footer.addWidget(self.details, 1)
        footer.addWidget(self.open_log_button)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.pauses_line)
        layout.addWidget(self.table, 1)
        layout.addLayout(footer)

        self.schedule_filter.currentIndexChanged.connect(self._apply_filter)
        self.status_filter.currentIndexChanged.connect(self._apply_filter)
        self.table.selectionModel().selectionChanged.connect(self._show_details)
        self.table.doubleClicked.connect(self.open_log)
        self.open_log_button.clicked.connect(self.open_log)
        self.model.modelReset.connect(self._show_details)
        self.rows.rowsAboutToBeInserted.connect(self._remember_scroll)
        self.rows.rowsInserted.connect(self._restore_scroll)
        self.retranslate()
        self._update_count()

    # -- what callers ask for ------------------------------------------------------------------

    def show_schedule(self, schedule_id: int | None) -> None:
        """Open on the runs of one schedule (None: of all), whatever the filters were."""
        self._set_filters(schedule_id)
        self._bring_up()

    def show_run(self, run_id: int) -> bool:
        """Open on one run, selected, its log one click away (a notification was clicked).

        False, and the runs of all schedules, when the run no longer exists.
        """
        self._apply_changes()
        try:
            run = self._store.get_run(run_id)
        except NotFoundError:
            self._set_filters(None)
            self._bring_up()
            return False
        self._set_filters(run.schedule_id)
        row = self.model.row_of(run_id)
        while row is None and self.model.canFetchMore():
            self.model.fetchMore()
            row = self.model.row_of(run_id)
        if row is not None:
            self.table.selectRow(row)
            self.table.scrollTo(
                self.rows.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter
            )
        self._bring_up()
        self.open_log_button.setFocus()
        return row is not None

    def run_changed(self, run_id: int) -> None:
        """A run started or ended: its row is updated (or inserted) shortly, with others."""
        self.runs_changed((run_id,))

    def run_fired(self, schedule_id: int, run_id: int, missed: int) -> None:
        """A fire: its run, and the ``missed`` earlier dues recorded skipped with it, which no
        event names (a wake's skipped rows appear live, not only when the window reopens)."""
        if missed:
            self._missed[run_id] = (schedule_id, missed)
        self.run_changed(run_id)

    def runs_changed(self, run_ids: Iterable[int]) -> None:
        self._changed.update(run_ids)
        if not self._update_timer.isActive():
            self._update_timer.start()

    def schedules_changed(self) -> None:
        """A schedule was created, renamed or deleted: the schedule filter follows."""
        self._fill_schedules()

    def refresh(self) -> None:
        """Show what happened since: new runs, ended runs, renamed or deleted schedules."""
        self._changed.clear()
        self._missed.clear()
        chosen = self.schedule_filter.currentData()
        self._fill_schedules()
        if self.schedule_filter.currentData() != chosen:
            self._apply_filter()  # the chosen schedule was deleted
        else:
            self.model.refresh()
            self._update_count()
            self._show_details()

    def selected_run(self) -> Run | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.run_at(rows[0].row()) if rows else None

    def open_log(self) -> LogDialog | None:
        """Open the selected run's log in a window of its own (several may be open at once)."""
        run = self.selected_run()
        if run is None:
            return None
        dialog = LogDialog(run, self.model.schedule_name(run), self)
        dialog.show()
        return dialog

    def retranslate(self) -> None:
        self.setWindowTitle(tr("History — domi-desktop"))
        self._schedule_label.setText(tr("Schedule:"))
        self._status_label.setText(tr("Status:"))
        self.schedule_filter.setItemText(0, tr("All schedules"))
        self.status_filter.setItemText(0, tr("All"))
        for index, label in enumerate(STATUS_LABELS.values(), start=1):
            self.status_filter.setItemText(index, tr(label))
        self.open_log_button.setText(tr("Open log"))
        self.model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(Column) - 1)
        self.texts_changed()

    def texts_changed(self) -> None:
        """Another language or local zone: every cell of the table's copy is written again; not
        for a hidden window (its next showing does it), which may outlive what the texts need
        (the OS zone, at shutdown)."""
        self._texts_stale = not self.isVisible()
        if not self._texts_stale:
            self.model.texts_changed()
            self._fit_columns()  # the headers' and cells' words are of another width
        self._show_count()  # from memory: a language change reads nothing from the store
        self._show_details()
        self._show_pauses()

    def _show_pauses(self) -> None:
        """ "Pause all" told once, its dues counted in it (they are not rows of the table);
        worded from memory, as the count."""
        lines = [pause_words(pause) for pause in self._pauses]
        self.pauses_line.setText("\n".join(lines))
        self.pauses_line.setVisible(bool(lines))

    def showEvent(self, event: QShowEvent) -> None:
        if self._texts_stale:
            self._texts_stale = False
            self.model.texts_changed()
            self._fit_columns()
        super().showEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()

    # -- internals -----------------------------------------------------------------------------

    def _apply_changes(self) -> None:
        self._update_timer.stop()
        if not self._changed:
            return
        # The newest first, a bounded batch each interval: a catch-up ends thousands of runs at
        # once, and one read of them all held the loop for a fifth of a second.
        newest = sorted(self._changed, reverse=True)
        changed, rest = newest[:UPDATE_BATCH], newest[UPDATE_BATCH:]
        self._changed = set(rest)
        if rest:
            self._update_timer.start()
        missed, self._missed = self._missed, {}
        self.model.update_runs([*changed, *self.model.skipped_with(missed)])
        if not self._count_timer.isActive():  # counting the runs reads them all: once a second
            self._count_timer.start()
        self._show_details()

    def _set_filters(self, schedule_id: int | None) -> None:
        self._fill_schedules()
        # A schedule deleted since the menu was built: all schedules, rather than nothing.
        found = -1 if schedule_id is None else self.schedule_filter.findData(schedule_id)
        with QSignalBlocker(self.schedule_filter), QSignalBlocker(self.status_filter):
            self.schedule_filter.setCurrentIndex(max(0, found))
            self.status_filter.setCurrentIndex(0)
        self._apply_filter()

    def _bring_up(self) -> None:
        self.show()
        self.raise_()
        self.activateWindow()

    def _fill_schedules(self) -> None:
        chosen = self.schedule_filter.currentData()
        with QSignalBlocker(self.schedule_filter):
            self.schedule_filter.clear()
            self.schedule_filter.addItem(tr("All schedules"), None)
            for schedule_id, (name, _zone) in self._store.schedule_labels().items():
                self.schedule_filter.addItem(name, schedule_id)
            self.schedule_filter.setCurrentIndex(max(0, self.schedule_filter.findData(chosen)))

    def _apply_filter(self) -> None:
        self._changed.clear()  # the new filter is read fresh from the store
        self._missed.clear()
        self.model.set_filter(self.schedule_filter.currentData(), self.status_filter.currentData())
        self._update_count()
        self._fit_columns()  # other rows, other widths

    def _update_count(self) -> None:
        self._count = self.model.total()
        self._show_count()
        # A pause begun, lifted or counting another due: read with the count, at its beat.
        self._pauses = recent_pauses(self._store, datetime.now(UTC))
        self._show_pauses()

    def _show_count(self) -> None:
        count = self._count
        text = tr("1 run") if count == 1 else tr("{count} runs", count=f"{count:,}")
        self.run_count.setText(text)

    def _show_details(self, *_: QItemSelection) -> None:
        run = self.selected_run()
        self.open_log_button.setEnabled(run is not None)
        if run is None:
            self.details.setText(tr("Select a run to see its details and open its log."))
            return
        tz = self.model.schedule_zone(run)
        parts = [tr("Run {id} of “{schedule}”", id=run.id, schedule=self.model.schedule_name(run))]
        if not_run(run):
            # It never fired: when it was due, and since when it waits.
            if run.due is not None:
                parts.append(tr("due {time}", time=format_time(run.due, tz)))
            if run.status is RunStatus.waiting and run.fired_at is not None:
                parts.append(tr("waiting since {time}", time=format_time(run.fired_at, tz)))
        elif run.fired_at is not None:
            parts.append(tr("fired {time}", time=format_time(run.fired_at, tz)))
        if run.finished_at is not None and not not_run(run):
            parts.append(tr("finished {time}", time=format_time(run.finished_at, tz)))
        if exit_text(run) == str(run.exit_code):
            parts.append(tr("exit code {code}", code=run.exit_code))
        parts.append(reason_text(run.reason))
        story = story_of(self._store, run, datetime.now(UTC))
        if story is not None:
            parts.append(due_words(story))  # the Timeline says the same of this due
        self.details.setText(" · ".join(part for part in parts if part))

    def _remember_scroll(self, _parent: QModelIndex, first: int, _last: int) -> None:
        # Rows inserted on top push down what the user is reading, unless they are at the top,
        # where new runs are exactly what they want to see appear.
        top = self.table.rowAt(0)
        at_top = self.table.verticalScrollBar().value() == 0
        self._scroll_anchor = None if first != 0 or at_top or top < 0 else top

    def _fit_columns(self) -> None:
        """Each column as wide as its header and its first rows: measured by Qt on the table's
        copy of the rows, held on the C++ side (``ShownRows``), so no cell calls into Python."""
        self.table.resizeColumnsToContents()

    def _restore_scroll(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self._scroll_anchor is not None:
            row = self._scroll_anchor + last - first + 1
            self.table.scrollTo(self.rows.index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop)
            self._scroll_anchor = None
        elif first == 0 and self.model.rowCount() == last + 1:
            self._fit_columns()  # the first rows after an empty table
