"""The runs the history lists: a table model over the store, newest first, read a page at a time,
updated row by row as runs start and end.

Times are shown on the OS's clock of the moment (the user reads them against the clock on their
screen, wherever the laptop is), with the schedule's own time beside them where its zone differs:
``Tue 2026-03-03 14:00 (09:00 New York)``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush

from domi_desktop.cron import LOCAL
from domi_desktop.errors import NotFoundError
from domi_desktop.model import Run, RunStatus, SkipReason
from domi_desktop.ports import RunReader
from domi_desktop.ui.history.texts import (
    FAILURES,
    STATUS_LABELS,
    TRIGGER_LABELS,
    exit_text,
    format_duration,
    format_time,
    not_run,
    reason_text,
    short_reason,
)
from domi_desktop.ui.i18n import tr
from domi_desktop.ui.palette import Colors, colors

PAGE_SIZE = 200
"""Runs read per page: a few screens' worth, one indexed query of a few milliseconds."""

AnyIndex = QModelIndex | QPersistentModelIndex

_DISPLAY = Qt.ItemDataRole.DisplayRole
_NO_PARENT = QModelIndex()


class Column(IntEnum):
    schedule = 0
    due = 1
    started = 2
    status = 3
    reason = 4
    trigger = 5
    late = 6
    missed = 7
    duration = 8
    exit_code = 9


_HEADERS = {
    Column.schedule: "Schedule",
    Column.due: "Due",
    Column.started: "Started",
    Column.status: "Status",
    Column.reason: "Reason",
    Column.trigger: "Trigger",
    Column.late: "Late",
    Column.missed: "Missed",
    Column.duration: "Duration",
    Column.exit_code: "Exit code",
}
_NUMERIC = frozenset({Column.missed, Column.duration, Column.exit_code})
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def alignment(column: Column) -> Qt.AlignmentFlag | None:
    """Numbers are aligned right; the rest as the style has it (None)."""
    return _RIGHT if column in _NUMERIC else None


@dataclass(frozen=True, slots=True)
class ShownRun:
    """What a row shows: each column's text and colour (None: the palette's), its tooltip."""

    texts: tuple[str, ...]
    brushes: tuple[QBrush | None, ...]
    tooltip: str


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
        self._zones: dict[int, str] = {}
        self._reload()

    # -- what is shown -------------------------------------------------------------------------

    def set_filter(self, schedule_id: int | None, status: str | None) -> None:
        """Show only the runs of one schedule and/or one status (``None``: all); back to the top."""
        self._schedule_id = schedule_id
        self._status = None if status is None else RunStatus(status)
        self._reload()

    def total(self) -> int:
        """How many runs match the filter, loaded or not."""
        return self._store.count_runs(self._schedule_id, self._status, paused=False)

    def run_at(self, row: int) -> Run:
        return self._runs[row]

    def schedule_name(self, run: Run) -> str:
        # Deleting a schedule deletes its runs; the id covers the moment before the next refresh.
        return self._names.get(run.schedule_id, f"#{run.schedule_id}")

    def schedule_zone(self, run: Run) -> str:
        return self._zones.get(run.schedule_id, LOCAL)

    def row_of(self, run_id: int) -> int | None:
        """The row of a loaded run (the rows are in descending id order)."""
        row = self._position(run_id)
        return row if row < len(self._runs) and self._runs[row].id == run_id else None

    def update_runs(self, run_ids: Collection[int]) -> None:
        """Show the current state of these runs: the rows of loaded runs are updated (or removed
        when they left the filter), new matching runs are inserted where they belong.

        Costs two reads for the whole batch (the runs, their schedules' names and zones) and
        never resets the model, so a burst of ended runs leaves the selection and the scroll
        position alone.
        """
        # Below the last loaded row, the next page brings it when the user scrolls there.
        run_ids = [run_id for run_id in run_ids if self._loaded_range(run_id)]
        found = self._store.runs_by_id(run_ids)
        relabelled = self._learn_labels({run.schedule_id for run in found.values()})
        new: list[Run] = []
        for run_id in sorted(run_ids):  # the oldest first: removing keeps the rows above in place
            row = self.row_of(run_id)
            run = found.get(run_id)
            matches = run is not None and self._matches(run)
            if row is not None and run is not None and matches:
                self._runs[row] = run
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(Column) - 1))
            elif row is not None:
                self.beginRemoveRows(_NO_PARENT, row, row)
                del self._runs[row]
                self.endRemoveRows()
            elif run is not None and matches:
                new.append(run)
        self._insert(new)
        if relabelled and self._runs:
            last = len(self._runs) - 1
            self.dataChanged.emit(self.index(0, Column.schedule), self.index(last, Column.schedule))

    def skipped_with(self, fires: dict[int, tuple[int, int]]) -> list[int]:
        """The ids of the dues recorded skipped with each fire (run id -> (schedule id, how
        many)) that the filter shows: the schedule's latest skipped runs below the fire's run."""
        if self._status not in (None, RunStatus.skipped):
            return []
        found: list[int] = []
        for run_id, (schedule_id, missed) in fires.items():
            if self._schedule_id in (None, schedule_id) and self._loaded_range(run_id):
                runs = self._store.runs(
                    schedule_id,
                    RunStatus.skipped,
                    limit=min(missed, PAGE_SIZE),
                    before_id=run_id,
                    paused=False,
                )
                found.extend(run.id for run in runs)
        return found

    def _insert(self, runs: list[Run]) -> None:
        """Runs that are not loaded yet, oldest first: each stretch that goes in at one place is
        one insertion (a view told of a hundred one-row insertions at the top of thousands of
        rows re-laid them out a hundred times)."""
        at: dict[int, list[Run]] = {}
        for run in runs:
            at.setdefault(self._position(run.id), []).insert(0, run)
        for position in sorted(at, reverse=True):  # the lowest first: the places above hold
            stretch = at[position]
            self.beginInsertRows(_NO_PARENT, position, position + len(stretch) - 1)
            self._runs[position:position] = stretch
            self.endInsertRows()

    def _loaded_range(self, run_id: int) -> bool:
        """Whether ``run_id`` is, or belongs, among the loaded rows."""
        return self._exhausted or self._position(run_id) < len(self._runs)

    def _position(self, run_id: int) -> int:
        """Where ``run_id`` is, or would go, in the loaded rows (newest, the highest id, first)."""
        return bisect_left(self._runs, -run_id, key=lambda run: -run.id)

    def _matches(self, run: Run) -> bool:
        # A due skipped for "Pause all" is counted in its pause (the line above the table).
        paused = run.status is RunStatus.skipped and run.reason == SkipReason.paused.value
        return (
            not paused
            and (self._schedule_id is None or run.schedule_id == self._schedule_id)
            and (self._status is None or run.status is self._status)
        )

    def refresh(self) -> None:
        """Catch up with the store after runs were recorded or ended.

        New runs are inserted at the top and the loaded rows are updated in place, so the view keeps
        its selection and the rows it shows. When that is not possible (runs deleted, a filtered
        status that no longer matches, more new runs than a page) the model is reset to the top.
        """
        self._read_context()
        fresh = self._store.runs(self._schedule_id, self._status, limit=PAGE_SIZE, paused=False)
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
        page = self._store.runs(
            self._schedule_id, self._status, limit=PAGE_SIZE, before_id=before, paused=False
        )
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
            return _foreground(run, column, colors())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(run)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return alignment(column)
        return None

    def shown(self, row: int) -> ShownRun:
        """What row ``row`` shows, every column at once: ``data`` cell by cell and role by role
        was most of what a History refresh cost during a catch-up."""
        run = self._runs[row]
        shades = colors()
        return ShownRun(
            texts=tuple(self._display(run, column) for column in Column),
            brushes=tuple(_foreground(run, column, shades) for column in Column),
            tooltip=self._tooltip(run),
        )

    # -- internals -----------------------------------------------------------------------------

    def _display(self, run: Run, column: Column) -> str:
        match column:
            case Column.schedule:
                return self.schedule_name(run)
            case Column.due:
                return format_time(run.due, self.schedule_zone(run))
            case Column.started:
                return format_time(run.started_at, self.schedule_zone(run))
            case Column.status:
                return tr(STATUS_LABELS[run.status])
            case Column.reason:
                return short_reason(run)
            case Column.trigger:
                return tr(TRIGGER_LABELS[run.trigger])
            case Column.late:
                return tr("yes") if run.late else ""
            case Column.missed:
                return str(run.missed_count) if run.missed_count else ""
            case Column.duration:
                duration = run.duration
                return "" if duration is None else format_duration(duration)
            case Column.exit_code:
                return exit_text(run)

    def _tooltip(self, run: Run) -> str:
        lines = [reason_text(run.reason)]
        if run.late and run.due is not None and not not_run(run):
            lines.append(
                tr(
                    "Ran late: due {due}, started {fired}",
                    due=format_time(run.due, self.schedule_zone(run)),
                    fired=format_time(run.fired_at, self.schedule_zone(run)),
                )
            )
        if run.missed_count:
            lines.append(tr("Earlier runs skipped: {count}", count=run.missed_count))
        return "\n".join(line for line in lines if line)

    def _read_context(self) -> None:
        self._names, self._zones = {}, {}
        self._learn_labels(None)

    def _learn_labels(self, schedule_ids: Collection[int] | None) -> bool:
        """Whether a schedule known before was renamed or moved to another zone."""
        changed = False
        for schedule_id, (name, zone) in self._store.schedule_labels(schedule_ids).items():
            known = self._names.get(schedule_id), self._zones.get(schedule_id)
            if known not in ((None, None), (name, zone)):
                changed = True
            self._names[schedule_id] = name
            self._zones[schedule_id] = zone
        return changed

    def texts_changed(self) -> None:
        """Another language or local zone: every cell is written afresh."""
        if self._runs:
            last = self.index(len(self._runs) - 1, len(Column) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

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


def _foreground(run: Run, column: Column, shades: Colors) -> QBrush | None:
    # Read at each paint: the palette (light or dark) may have changed since the last one.
    if column is Column.status:
        if run.status in FAILURES:
            return QBrush(shades.error)
        if run.late or run.status in (RunStatus.interrupted, RunStatus.waiting):
            return QBrush(shades.late)
    # Skipped rows are the bulk after a long sleep; greyed, the runs that did run stand out.
    if run.status is RunStatus.skipped:
        return QBrush(shades.muted)
    return None
