"""The schedules as a table model: one row per schedule, updated a row at a time.

Rows are loaded once (``load``); afterwards the app's events and the service's changes update the
rows they name (``upsert``, ``remove``, ``run_started``, ``run_finished``), so 10,000 schedules
cost one decode at start, not one per event. What is slow to compute and not always seen (the
description, the last run) is filled in lazily, for the rows the view actually paints.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor

from domi_desktop import timefmt
from domi_desktop.cron import describe, local_zone, zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import Run, RunStatus, Schedule
from domi_desktop.ports import RunReader
from domi_desktop.scheduler import oneoff
from domi_desktop.ui.history.texts import reason_words
from domi_desktop.ui.i18n import cron_language, register, tr, weekdays, zone_name
from domi_desktop.ui.sentence import schedule_sentence

AnyIndex = QModelIndex | QPersistentModelIndex
_NO_PARENT = QModelIndex()
_DISPLAY = Qt.ItemDataRole.DisplayRole
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole

register(
    "zh",
    {
        "Name": "名称",
        "What it means": "含义",
        "Next run": "下次运行",
        "Last run": "上次运行",
        "Result": "结果",
        "Enabled": "启用",
        "running…": "运行中……",
        "succeeded": "成功",
        "failed": "失败",
        "timed out": "超时",
        "interrupted": "已中断",
        "skipped": "已跳过",
        "waiting": "等待条件",
        "never": "从未",
        "paused": "已暂停",
        "all paused": "全部暂停",
        "done (ran once)": "已完成（运行过一次）",
        "skipping {when}": "跳过 {when}",
        "{when} (snoozed)": "{when}（已推迟）",
        "invalid: {reason}": "无效：{reason}",
    },
)

_STATUS = {
    RunStatus.running: "running…",
    RunStatus.succeeded: "succeeded",
    RunStatus.failed: "failed",
    RunStatus.timed_out: "timed out",
    RunStatus.interrupted: "interrupted",
    RunStatus.skipped: "skipped",
    RunStatus.waiting: "waiting",
}
_COLORS = {
    RunStatus.running: QColor("#1f6fd1"),
    RunStatus.succeeded: QColor("#2e7d32"),
    RunStatus.failed: QColor("#c62828"),
    RunStatus.timed_out: QColor("#c62828"),
    RunStatus.interrupted: QColor("#b26a00"),
    RunStatus.skipped: QColor("#808080"),
    RunStatus.waiting: QColor("#b26a00"),
}
_NOT_READ = object()


class Column(IntEnum):
    title = 0
    meaning = 1
    next_run = 2
    last_run = 3
    result = 4
    enabled = 5


HEADERS = ("Name", "What it means", "Next run", "Last run", "Result", "Enabled")


def person_moment(moment: datetime, tz: str) -> str:
    """``Tue 06-03 14:00 (09:00 New York)``: local time, the schedule's own beside it."""
    try:
        zone = zone_for(tz)
    except DomiError:
        zone = None
    return timefmt.for_person(
        moment, local_zone(), schedule_zone=zone, schedule_zone_name=zone_name(tz),
        weekdays=weekdays(),
    )  # fmt: skip


def notes_tooltip(notes: str) -> str | None:
    """The schedule's notes as a tooltip: shown as typed (escaped, so a note with ``<b>`` is not
    taken for markup; its line breaks, tabs and runs of spaces kept, long lines wrapped)."""
    if not notes.strip():
        return None
    return f"<p style='white-space:pre-wrap'>{html.escape(notes)}</p>"


class ScheduleModel(QAbstractTableModel):
    """Every schedule, with its next fire (from the planner), last run and result."""

    def __init__(
        self,
        runs: RunReader,
        next_fire: Callable[[int], datetime | None],
        set_enabled: Callable[[int, bool], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._runs = runs
        self._next_fire = next_fire
        self._set_enabled = set_enabled
        self._rows: list[Schedule] = []
        self._index: dict[int, int] = {}
        """schedule id -> row"""
        self._last: dict[int, Run | None] = {}
        self._meaning: dict[int, str] = {}
        self._running: set[int] = set()
        self._waiting: dict[int, str] = {}
        """Schedule id -> what its waiting run waits for (the engine's words)."""
        self.paused_all = False
        self.loaded = False

    # -- filling and updating --------------------------------------------------------------------

    def load(self, schedules: list[Schedule] | None = None) -> None:
        """Read every schedule (once, or after a change made by another process)."""
        fresh = self._runs.list_schedules() if schedules is None else schedules
        self.beginResetModel()
        self._rows = list(fresh)
        self._reindex()
        self._last.clear()
        self._meaning.clear()
        self.endResetModel()
        self.loaded = True

    def upsert(self, schedule: Schedule) -> None:
        row = self._index.get(schedule.id)
        self._meaning.pop(schedule.id, None)
        if row is None:
            row = len(self._rows)
            self.beginInsertRows(_NO_PARENT, row, row)
            self._rows.append(schedule)
            self._index[schedule.id] = row
            self.endInsertRows()
        else:
            self._rows[row] = schedule
            self._changed(row)

    def remove(self, schedule_id: int) -> None:
        row = self._index.get(schedule_id)
        if row is None:
            return
        self.beginRemoveRows(_NO_PARENT, row, row)
        del self._rows[row]
        self._reindex()
        self._last.pop(schedule_id, None)
        self.endRemoveRows()

    def run_started(self, schedule_id: int) -> None:
        self._running.add(schedule_id)
        self._waiting.pop(schedule_id, None)
        # Its last run is this one now: read again when shown, with its start.
        self._last.pop(schedule_id, None)
        self._changed_id(schedule_id)

    def run_waiting(self, schedule_id: int, reason: str) -> None:
        """A due run of the schedule waits for its conditions: the result says what for."""
        self._waiting[schedule_id] = reason
        self._changed_id(schedule_id)

    def run_finished(self, schedule_id: int, run: Run | None, still_running: bool) -> None:
        if not still_running:
            self._running.discard(schedule_id)
        if run is None or run.status is not RunStatus.waiting:
            self._waiting.pop(schedule_id, None)
        self._last[schedule_id] = run
        self._changed_id(schedule_id)

    def set_running(self, schedule_ids: set[int]) -> None:
        changed = schedule_ids ^ self._running
        self._running = set(schedule_ids)
        for schedule_id in changed & schedule_ids:
            self._waiting.pop(schedule_id, None)  # a waiting run that started
        for schedule_id in changed:
            self._changed_id(schedule_id)

    def times_changed(self) -> None:
        """Next fires move on every wake: repaint that column only (the view asks visible rows)."""
        if self._rows:
            self.dataChanged.emit(
                self.index(0, Column.next_run), self.index(len(self._rows) - 1, Column.next_run)
            )

    def texts_changed(self) -> None:
        """Another language: the headers and every cell again (the cron meanings re-described)."""
        self._meaning.clear()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(Column) - 1)
        if self._rows:
            last = self.index(len(self._rows) - 1, len(Column) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    # -- reading -----------------------------------------------------------------------------------

    def schedule_at(self, row: int) -> Schedule:
        return self._rows[row]

    def row_of(self, schedule_id: int) -> int | None:
        return self._index.get(schedule_id)

    def schedules(self) -> list[Schedule]:
        return list(self._rows)

    def is_running(self, schedule_id: int) -> bool:
        return schedule_id in self._running

    def meaning(self, schedule: Schedule) -> str:
        text = self._meaning.get(schedule.id)
        if text is None:
            try:
                text = describe(schedule.expr, cron_language())
            except DomiError as error:
                text = tr("invalid: {reason}", reason=str(error))
            self._meaning[schedule.id] = text
        return text

    def last_run(self, schedule_id: int) -> Run | None:
        found = self._last.get(schedule_id, _NOT_READ)
        if found is _NOT_READ:
            runs = self._runs.runs(schedule_id, limit=1)
            found = runs[0] if runs else None
            self._last[schedule_id] = found
        assert found is None or isinstance(found, Run)
        return found

    # -- QAbstractTableModel -------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == _DISPLAY:
            return tr(HEADERS[section])
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.column() == Column.enabled:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: AnyIndex, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        schedule = self._rows[index.row()]
        column = Column(index.column())
        if role == _DISPLAY:
            return self._display(schedule, column)
        if role == Qt.ItemDataRole.CheckStateRole and column is Column.enabled:
            return Qt.CheckState.Checked if schedule.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ForegroundRole and column is Column.result:
            status = self._status(schedule.id)
            return None if status is None else QBrush(_COLORS[status])
        if role == Qt.ItemDataRole.ToolTipRole and column is Column.title:
            return notes_tooltip(schedule.notes)
        if role == Qt.ItemDataRole.ToolTipRole and column is Column.meaning:
            return schedule_sentence(schedule)
        if role == Qt.ItemDataRole.ToolTipRole and column is Column.result:
            last = self.last_run(schedule.id)
            return None if last is None or last.reason is None else reason_words(last.reason)
        if role == SORT_ROLE:
            return self._sort_key(schedule, column)
        if role == ID_ROLE:
            return schedule.id
        return None

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != Column.enabled:
            return False
        checked = Qt.CheckState(value) == Qt.CheckState.Checked
        self._set_enabled(self._rows[index.row()].id, checked)
        return True

    # -- helpers -------------------------------------------------------------------------------

    def _display(self, schedule: Schedule, column: Column) -> str:
        if column is Column.title:
            return schedule.name
        if column is Column.meaning:
            return self.meaning(schedule)
        if column is Column.next_run:
            if not schedule.enabled:
                return tr("paused")
            if oneoff.done(schedule):
                return tr("done (ran once)")
            upcoming = self._next_fire(schedule.id)
            if upcoming is None:
                return ""
            text = person_moment(upcoming, schedule.tz)
            hold = oneoff.live_hold(schedule)
            if hold is not None and hold.skip and hold.due == upcoming:
                text = tr("skipping {when}", when=text)
            elif hold is not None and hold.until == upcoming:
                text = tr("{when} (snoozed)", when=text)
            return f"{text} · {tr('all paused')}" if self.paused_all else text
        if column is Column.last_run:
            last = self.last_run(schedule.id)
            moment = None if last is None else last.started_at or last.fired_at
            return tr("never") if moment is None else person_moment(moment, schedule.tz)
        if column is Column.result:
            waiting = self._waiting.get(schedule.id)
            if waiting is not None and schedule.id not in self._running:
                return reason_words(waiting)
            status = self._status(schedule.id)
            return "" if status is None else tr(_STATUS[status])
        return ""

    def _status(self, schedule_id: int) -> RunStatus | None:
        if schedule_id in self._running:
            return RunStatus.running
        if schedule_id in self._waiting:
            return RunStatus.waiting
        last = self.last_run(schedule_id)
        return None if last is None else last.status

    def _sort_key(self, schedule: Schedule, column: Column) -> Any:
        if column is Column.title:
            return schedule.name.casefold()
        if column is Column.next_run:
            upcoming = self._next_fire(schedule.id) if schedule.enabled else None
            return (upcoming or datetime.max.replace(tzinfo=UTC)).timestamp()
        if column is Column.last_run:
            last = self.last_run(schedule.id)
            moment = None if last is None else last.started_at or last.fired_at
            return 0.0 if moment is None else moment.timestamp()
        if column is Column.enabled:
            return int(schedule.enabled)
        return self._display(schedule, column)

    def _reindex(self) -> None:
        self._index = {schedule.id: row for row, schedule in enumerate(self._rows)}

    def _changed_id(self, schedule_id: int) -> None:
        row = self._index.get(schedule_id)
        if row is not None:
            self._changed(row)

    def _changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(Column) - 1))


class ScheduleFilter(QSortFilterProxyModel):
    """Sorting by the model's sort keys; the search box matches name, cron and meaning."""

    def __init__(self, model: ScheduleModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._model = model
        self._needle = ""
        self.setSourceModel(model)
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(False)

    def set_search(self, text: str) -> None:
        self.beginFilterChange()
        self._needle = text.strip().casefold()
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        if not self._needle:
            return True
        schedule = self._model.schedule_at(source_row)
        haystack = f"{schedule.name}\n{schedule.expr}\n{self._model.meaning(schedule)}"
        return self._needle in haystack.casefold()
