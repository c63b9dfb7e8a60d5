"""The run history: every run the store recorded, newest first, filterable, with each run's log.

The table is paged (``PAGE_SIZE`` runs per read, more as the user scrolls), so a history of
100,000 runs opens as fast as one of ten. Times are shown in the OS zone of the moment: the user
reads them against the clock on their screen, wherever the laptop is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from enum import IntEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSignalBlocker,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.cron import local_zone
from domi_desktop.errors import NotFoundError
from domi_desktop.model import PROCESS_DIED, Run, RunStatus, SkipReason, Trigger
from domi_desktop.ports import RunReader
from domi_desktop.ui.editor_widgets import ERROR_COLOR
from domi_desktop.ui.i18n import format_moment, register, tr

PAGE_SIZE = 200
"""Runs read per page: a few screens' worth, one indexed query of a few milliseconds."""

LOG_VIEW_LIMIT = 1024 * 1024
"""Bytes of a log shown: its end is what explains a failure, and a text view of a
multi-gigabyte log would freeze the app."""

AnyIndex = QModelIndex | QPersistentModelIndex

_DISPLAY = Qt.ItemDataRole.DisplayRole
_NO_PARENT = QModelIndex()


class Column(IntEnum):
    schedule = 0
    due = 1
    started = 2
    status = 3
    trigger = 4
    late = 5
    missed = 6
    duration = 7
    exit_code = 8


_HEADERS = {
    Column.schedule: "Schedule",
    Column.due: "Due",
    Column.started: "Started",
    Column.status: "Status",
    Column.trigger: "Trigger",
    Column.late: "Late",
    Column.missed: "Missed",
    Column.duration: "Duration",
    Column.exit_code: "Exit code",
}
_NUMERIC = frozenset({Column.missed, Column.duration, Column.exit_code})

_STATUS_LABELS = {
    RunStatus.running: "running",
    RunStatus.succeeded: "succeeded",
    RunStatus.failed: "failed",
    RunStatus.timed_out: "timed out",
    RunStatus.interrupted: "interrupted",
    RunStatus.skipped: "skipped",
}
_TRIGGER_LABELS = {
    Trigger.scheduled: "scheduled",
    Trigger.catch_up: "catch-up",
    Trigger.manual: "manual",
    Trigger.resumed: "resumed",
}
# The reasons the app itself records; anything else (an error message) is shown as it was written.
_REASONS = {
    SkipReason.missed.value: "Missed: the computer was asleep or off at the due time",
    SkipReason.busy.value: "Skipped: the previous run was still running",
    SkipReason.paused.value: "Skipped: the schedule was paused",
    SkipReason.catch_up_window.value: "Skipped: too late to catch up (outside the catch-up window)",
    PROCESS_DIED: "The app stopped while this run was in progress",
}

_RED = QBrush(ERROR_COLOR)
_AMBER = QBrush(QColor("#b06d00"))
_GREY = QBrush(QColor("#8a8a8a"))
_FAILURES = frozenset({RunStatus.failed, RunStatus.timed_out})

register(
    "zh",
    {
        "Schedule": "计划",
        "Due": "应运行时间",
        "Started": "开始时间",
        "Status": "状态",
        "Trigger": "触发方式",
        "Late": "延迟",
        "Missed": "错过",
        "Duration": "耗时",
        "Exit code": "退出码",
        "running": "运行中",
        "succeeded": "成功",
        "failed": "失败",
        "timed out": "超时",
        "interrupted": "已中断",
        "skipped": "已跳过",
        "scheduled": "按计划",
        "catch-up": "补运行",
        "manual": "手动",
        "resumed": "恢复运行",
        "Missed: the computer was asleep or off at the due time": "错过：到点时电脑处于睡眠或关机状态",
        "Skipped: the previous run was still running": "跳过：上一次运行尚未结束",
        "Skipped: the schedule was paused": "跳过：该计划已暂停",
        "Skipped: too late to catch up (outside the catch-up window)": "跳过：已超出补运行时限",
        "The app stopped while this run was in progress": "运行过程中应用已退出",
        "yes": "是",
        "{seconds} s": "{seconds} 秒",
        "{minutes} min {seconds} s": "{minutes} 分 {seconds} 秒",
        "{hours} h {minutes} min": "{hours} 小时 {minutes} 分",
        "Ran late: due {due}, started {fired}": "延迟运行：应于 {due} 运行，实际 {fired} 开始",
        "Earlier runs skipped: {count}": "跳过的更早运行：{count} 次",
        "Run {id} of “{schedule}”": "“{schedule}”的第 {id} 号运行",
        "fired {time}": "触发于 {time}",
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
        "Log of run {id} (“{schedule}”)": "第 {id} 号运行的日志（“{schedule}”）",
        "This run has no log: it never started.": "这次运行没有日志：它没有开始。",
        "This run was skipped, so it has no log.": "这次运行已跳过，因此没有日志。",
        "No log was kept for this run.": "这次运行没有保存日志。",
        "The log file {path} no longer exists (deleted or moved).": (
            "日志文件 {path} 已不存在（被删除或移动）。"
        ),
        "Cannot read the log file {path}: {error}": "无法读取日志文件 {path}：{error}",
        "The log is empty.": "日志为空。",
        "Showing the last {shown} of {total}.": "仅显示最后 {shown}（共 {total}）。",
        "{size} KB": "{size} KB",
        "{size} MB": "{size} MB",
    },
)


def format_time(moment: datetime | None, zone: tzinfo) -> str:
    """``Mon 2026-03-02 09:00`` in ``zone``: to the minute, as a clock shows it."""
    if moment is None:
        return ""
    return format_moment(moment.astimezone(zone).replace(second=0, microsecond=0), year=True)


def format_duration(duration: timedelta) -> str:
    # Wall-clock times are recorded, so a clock set back mid-run can make this negative.
    seconds = max(0.0, duration.total_seconds())
    if seconds < 59.5:  # rounds to "1 min 00 s" from here, never to "60 s"
        shown = f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"
        return tr("{seconds} s", seconds=shown)
    whole = round(seconds)
    if whole < 3600:
        return tr("{minutes} min {seconds} s", minutes=whole // 60, seconds=f"{whole % 60:02d}")
    return tr("{hours} h {minutes} min", hours=whole // 3600, minutes=f"{whole // 60 % 60:02d}")


def reason_text(reason: str | None) -> str:
    if reason is None:
        return ""
    known = _REASONS.get(reason)
    return reason if known is None else tr(known)


class RunsModel(QAbstractTableModel):
    """The store's runs, newest first, read a page at a time as the view scrolls."""

    def __init__(self, store: RunReader, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self._schedule_id: int | None = None
        self._status: RunStatus | None = None
        self._runs: list[Run] = []
        self._exhausted = False
        self._names: dict[int, str] = {}
        self._zone: tzinfo = local_zone()
        self._reload()

    # -- what is shown -------------------------------------------------------------------------

    def set_filter(self, schedule_id: int | None, status: str | None) -> None:
        """Show only the runs of one schedule and/or one status (``None``: all); back to the top."""
        self._schedule_id = schedule_id
        self._status = None if status is None else RunStatus(status)
        self._reload()

    def total(self) -> int:
        """How many runs match the filter, loaded or not."""
        return self._store.count_runs(self._schedule_id, self._status)

    def run_at(self, row: int) -> Run:
        return self._runs[row]

    def schedule_name(self, run: Run) -> str:
        # Deleting a schedule deletes its runs; the id covers the moment before the next refresh.
        return self._names.get(run.schedule_id, f"#{run.schedule_id}")

    def refresh(self) -> None:
        """Catch up with the store after runs were recorded or ended.

        New runs are inserted at the top and the loaded rows are updated in place, so the view keeps
        its selection and the rows it shows. When that is not possible (runs deleted, a filtered
        status that no longer matches, more new runs than a page) the model is reset to the top.
        """
        self._read_context()
        fresh = self._store.runs(self._schedule_id, self._status, limit=PAGE_SIZE)
        new = self._merge(fresh)
        if new is None:
            self._reload()
            return
        if new:
            self.beginInsertRows(_NO_PARENT, 0, len(new) - 1)
            self._runs[0:0] = new
            self.endInsertRows()
        if self._runs:
            # Schedule names, the zone and the runs that ended may all have changed.
            last = self.index(len(self._runs) - 1, len(Column) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    # -- QAbstractTableModel -------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: AnyIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(Column)

    def canFetchMore(self, parent: AnyIndex = _NO_PARENT) -> bool:
        return not parent.isValid() and not self._exhausted

    def fetchMore(self, parent: AnyIndex = _NO_PARENT) -> None:
        if not self.canFetchMore(parent):
            return
        before = self._runs[-1].id if self._runs else None
        page = self._store.runs(self._schedule_id, self._status, limit=PAGE_SIZE, before_id=before)
        self._exhausted = len(page) < PAGE_SIZE
        if page:
            first = len(self._runs)
            self.beginInsertRows(_NO_PARENT, first, first + len(page) - 1)
            self._runs.extend(page)
            self.endInsertRows()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == _DISPLAY:
            return tr(_HEADERS[Column(section)])
        return None

    def data(self, index: AnyIndex, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        run = self._runs[index.row()]
        column = Column(index.column())
        if role == _DISPLAY:
            return self._display(run, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return _foreground(run, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(run)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _NUMERIC:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    # -- internals -----------------------------------------------------------------------------

    def _display(self, run: Run, column: Column) -> str:
        match column:
            case Column.schedule:
                return self.schedule_name(run)
            case Column.due:
                return format_time(run.due, self._zone)
            case Column.started:
                return format_time(run.started_at, self._zone)
            case Column.status:
                return tr(_STATUS_LABELS[run.status])
            case Column.trigger:
                return tr(_TRIGGER_LABELS[run.trigger])
            case Column.late:
                return tr("yes") if run.late else ""
            case Column.missed:
                return str(run.missed_count) if run.missed_count else ""
            case Column.duration:
                duration = run.duration
                return "" if duration is None else format_duration(duration)
            case Column.exit_code:
                return "" if run.exit_code is None else str(run.exit_code)

    def _tooltip(self, run: Run) -> str:
        lines = [reason_text(run.reason)]
        if run.late and run.due is not None:
            lines.append(
                tr(
                    "Ran late: due {due}, started {fired}",
                    due=format_time(run.due, self._zone),
                    fired=format_time(run.fired_at, self._zone),
                )
            )
        if run.missed_count:
            lines.append(tr("Earlier runs skipped: {count}", count=run.missed_count))
        return "\n".join(line for line in lines if line)

    def _read_context(self) -> None:
        self._names = {schedule.id: schedule.name for schedule in self._store.list_schedules()}
        self._zone = local_zone()

    def _reload(self) -> None:
        self.beginResetModel()
        self._read_context()
        self._runs = []
        self._exhausted = False
        self.endResetModel()
        self.fetchMore(_NO_PARENT)

    def _merge(self, fresh: list[Run]) -> list[Run] | None:
        """Update the loaded runs from ``fresh`` (the newest page); return the runs to insert on
        top, or None when the loaded rows cannot be reconciled and the model must be reset."""
        if not self._runs:
            return None
        top = self._runs[0].id
        new = [run for run in fresh if run.id > top]
        if len(new) == PAGE_SIZE:
            return None  # maybe more new runs than a page: a gap we would not see
        known = fresh[len(new) :]
        # The page covers every id down to its last one, or everything if it is not full.
        floor = fresh[-1].id if len(fresh) == PAGE_SIZE else 0
        covered = next(
            (row for row, run in enumerate(self._runs) if run.id < floor), len(self._runs)
        )
        if [run.id for run in self._runs[:covered]] != [run.id for run in known]:
            return None
        self._runs[:covered] = known
        # Older rows change only when a run ends; rereading just the unfinished ones stays cheap.
        for row in range(covered, len(self._runs)):
            if self._runs[row].status is RunStatus.running:
                try:
                    run = self._store.get_run(self._runs[row].id)
                except NotFoundError:
                    return None
                if self._status is not None and run.status is not self._status:
                    return None
                self._runs[row] = run
        return new


def _foreground(run: Run, column: Column) -> QBrush | None:
    if column is Column.status:
        if run.status in _FAILURES:
            return _RED
        if run.late or run.status is RunStatus.interrupted:
            return _AMBER
    # Skipped rows are the bulk after a long sleep; greyed, the runs that did run stand out.
    if run.status is RunStatus.skipped:
        return _GREY
    return None


@dataclass(frozen=True)
class LogTail:
    text: str
    note: str
    """What the user should know about ``text``: missing, empty, cut; empty if nothing."""


def run_log(run: Run, limit: int = LOG_VIEW_LIMIT) -> LogTail:
    """What the log window shows for ``run``."""
    if run.log_path is not None:
        return read_log_tail(run.log_path, limit)
    if run.status is RunStatus.skipped:
        return LogTail("", tr("This run was skipped, so it has no log."))
    if run.started_at is None:
        return LogTail("", tr("This run has no log: it never started."))
    return LogTail("", tr("No log was kept for this run."))


def read_log_tail(path: str, limit: int = LOG_VIEW_LIMIT) -> LogTail:
    """The last ``limit`` bytes of the log at ``path``, as text starting at a line boundary."""
    try:
        with Path(path).open("rb") as file:
            total = file.seek(0, os.SEEK_END)
            start = max(0, total - limit)
            file.seek(start)
            data = file.read(limit)
    except FileNotFoundError:
        return LogTail(
            "", tr("The log file {path} no longer exists (deleted or moved).", path=path)
        )
    except OSError as error:
        message = tr(
            "Cannot read the log file {path}: {error}", path=path, error=error.strerror or error
        )
        return LogTail("", message)
    text = data.decode("utf-8", errors="replace")
    if not start:
        return LogTail(text, "" if text else tr("The log is empty."))
    # The cut may fall inside a line, even inside a UTF-8 character: start at the next line.
    text = text.partition("\n")[2]
    note = tr("Showing the last {shown} of {total}.", shown=_size(limit), total=_size(total))
    return LogTail(text, note)


def _size(size: int) -> str:
    if size < 1024 * 1024:
        return tr("{size} KB", size=f"{size / 1024:,.0f}")
    return tr("{size} MB", size=f"{size / 1024 / 1024:,.1f}")


class LogDialog(QDialog):
    """A run's log, read only, scrolled to its end."""

    def __init__(self, run: Run, schedule: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logDialog")
        self.setWindowTitle(tr("Log of run {id} (“{schedule}”)", id=run.id, schedule=schedule))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        tail = run_log(run)
        if tail.text:
            self.resize(820, 560)
        self.note = QLabel(tail.note)
        self.note.setObjectName("logNote")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note.setVisible(bool(tail.note))
        self.view = QPlainTextEdit()
        self.view.setObjectName("logView")
        self.view.setReadOnly(True)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlainText(tail.text)
        self.view.moveCursor(QTextCursor.MoveOperation.End)
        self.view.setVisible(bool(tail.text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)


class HistoryWindow(QWidget):
    """Filters, the runs table, the selected run's details and its log."""

    def __init__(self, store: RunReader, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("historyWindow")
        self.setWindowTitle(tr("History — domi-desktop"))
        self.resize(1040, 600)
        self._store = store
        self.model = RunsModel(store, self)
        self._scroll_anchor: int | None = None

        self.schedule_filter = QComboBox()
        self.schedule_filter.setObjectName("scheduleFilter")
        self.schedule_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        self.status_filter.addItem(tr("All"), None)
        for status, label in _STATUS_LABELS.items():
            self.status_filter.addItem(tr(label), status.value)
        self._fill_schedules()
        self.run_count = QLabel()
        self.run_count.setObjectName("runCount")

        self.table = QTableView()
        self.table.setObjectName("runsTable")
        self.table.setModel(self.model)
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
        self.table.horizontalHeader().setSectionResizeMode(
            Column.schedule, QHeaderView.ResizeMode.Stretch
        )
        self.table.resizeColumnsToContents()

        self.details = QLabel()
        self.details.setObjectName("runDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_log_button = QPushButton(tr("Open log"))
        self.open_log_button.setObjectName("openLog")

        filters = QHBoxLayout()
        filters.addWidget(QLabel(tr("Schedule:")))
        filters.addWidget(self.schedule_filter)
        filters.addSpacing(12)
        filters.addWidget(QLabel(tr("Status:")))
        filters.addWidget(self.status_filter)
        filters.addStretch(1)
        filters.addWidget(self.run_count)
        footer = QHBoxLayout()
        footer.addWidget(self.details, 1)
        footer.addWidget(self.open_log_button)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addLayout(footer)

        self.schedule_filter.currentIndexChanged.connect(self._apply_filter)
        self.status_filter.currentIndexChanged.connect(self._apply_filter)
        self.table.selectionModel().selectionChanged.connect(self._show_details)
        self.table.doubleClicked.connect(self.open_log)
        self.open_log_button.clicked.connect(self.open_log)
        self.model.modelReset.connect(self._show_details)
        self.model.rowsAboutToBeInserted.connect(self._remember_scroll)
        self.model.rowsInserted.connect(self._restore_scroll)
        self._update_count()
        self._show_details()

    def show_schedule(self, schedule_id: int | None) -> None:
        """Open on the runs of one schedule (None: of all), whatever the filters were."""
        self._fill_schedules()
        # A schedule deleted since the menu was built: all schedules, rather than nothing.
        found = -1 if schedule_id is None else self.schedule_filter.findData(schedule_id)
        with QSignalBlocker(self.schedule_filter), QSignalBlocker(self.status_filter):
            self.schedule_filter.setCurrentIndex(max(0, found))
            self.status_filter.setCurrentIndex(0)
        self._apply_filter()
        self.show()
        self.raise_()
        self.activateWindow()

    def refresh(self) -> None:
        """Show what happened since: new runs, ended runs, renamed or deleted schedules."""
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

    def _fill_schedules(self) -> None:
        chosen = self.schedule_filter.currentData()
        with QSignalBlocker(self.schedule_filter):
            self.schedule_filter.clear()
            self.schedule_filter.addItem(tr("All schedules"), None)
            for schedule in self._store.list_schedules():
                self.schedule_filter.addItem(schedule.name, schedule.id)
            self.schedule_filter.setCurrentIndex(max(0, self.schedule_filter.findData(chosen)))

    def _apply_filter(self) -> None:
        self.model.set_filter(self.schedule_filter.currentData(), self.status_filter.currentData())
        self._update_count()

    def _update_count(self) -> None:
        count = self.model.total()
        text = tr("1 run") if count == 1 else tr("{count} runs", count=f"{count:,}")
        self.run_count.setText(text)

    def _show_details(self, *_: QItemSelection) -> None:
        run = self.selected_run()
        self.open_log_button.setEnabled(run is not None)
        if run is None:
            self.details.setText(tr("Select a run to see its details and open its log."))
            return
        zone = local_zone()
        parts = [tr("Run {id} of “{schedule}”", id=run.id, schedule=self.model.schedule_name(run))]
        if run.fired_at is not None:
            parts.append(tr("fired {time}", time=format_time(run.fired_at, zone)))
        if run.finished_at is not None:
            parts.append(tr("finished {time}", time=format_time(run.finished_at, zone)))
        if run.exit_code is not None:
            parts.append(tr("exit code {code}", code=run.exit_code))
        parts.append(reason_text(run.reason))
        self.details.setText(" · ".join(part for part in parts if part))

    def _remember_scroll(self, _parent: QModelIndex, first: int, _last: int) -> None:
        # Rows inserted on top push down what the user is reading, unless they are at the top,
        # where new runs are exactly what they want to see appear.
        top = self.table.rowAt(0)
        at_top = self.table.verticalScrollBar().value() == 0
        self._scroll_anchor = None if first != 0 or at_top or top < 0 else top

    def _restore_scroll(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self._scroll_anchor is not None:
            row = self._scroll_anchor + last - first + 1
            self.table.scrollTo(
                self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop
            )
            self._scroll_anchor = None
        elif first == 0 and self.model.rowCount() == last + 1:
            self.table.resizeColumnsToContents()  # the first rows after an empty table
