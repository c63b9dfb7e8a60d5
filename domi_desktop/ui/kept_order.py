"""The Schedules list keeps its sort as rows change, without moving the row under the pointer.

The changed rows are checked against their neighbours once per turn of the loop, and the list is
sorted again only when one is out of place (sorting 10,000 rows calls into Python a quarter of a
million times); never while hidden, nor while the pointer is over the rows, where a move would put
another job under the next click. The proxy moves its persistent indexes, so the selection stays
on its schedules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer
from PySide6.QtWidgets import QTableView

from domi_desktop.ui.schedule_model import Column, ScheduleFilter, ScheduleModel


class KeptOrder(QObject):
    def __init__(
        self,
        model: ScheduleModel,
        proxy: ScheduleFilter,
        table: QTableView,
        visible: Callable[[], bool],
    ) -> None:
        super().__init__(table)
        self._model = model
        self._proxy = proxy
        self._table = table
        self._visible = visible
        self._changed: set[int] = set()
        """Schedule ids whose rows changed since the order was last checked."""
        self._pointer_over = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.check)
        model.dataChanged.connect(self._rows_changed)
        model.rowsInserted.connect(self._rows_changed)

    def _rows_changed(self, first: QModelIndex, last: QModelIndex | int, *rest: Any) -> None:
        # dataChanged(top_left, bottom_right, roles) or rowsInserted(parent, first, last).
        if isinstance(last, int):
            rows = range(last, rest[0] + 1)
        elif first.column() == last.column() == Column.next_run:
            return  # a wake repaints the times; the rows that fired come with events of their own
        else:
            rows = range(first.row(), last.row() + 1)
        self._changed.update(self._model.schedule_at(row).id for row in rows)
        if not self._timer.isActive():
            self._timer.start(0)

    def check(self) -> None:
        """Sort again if a changed row is out of place (not while hidden or pointed at)."""
        if self._pointer_over or not self._visible() or not self._changed:
            return
        changed, self._changed = self._changed, set()
        if not all(self._in_place(schedule_id) for schedule_id in changed):
            header = self._table.horizontalHeader()
            # The proxy moves its persistent indexes: the selection stays on its schedules.
            self._proxy.sort(header.sortIndicatorSection(), header.sortIndicatorOrder())

    def _in_place(self, schedule_id: int) -> bool:
        """Whether that schedule's row sorts between its neighbours (or is filtered out)."""
        source_row = self._model.row_of(schedule_id)
        if source_row is None:
            return True
        column = self._table.horizontalHeader().sortIndicatorSection()
        row = self._proxy.mapFromSource(self._model.index(source_row, column)).row()
        if row < 0:
            return True

        def key(proxy_row: int) -> QModelIndex:
            return self._proxy.mapToSource(self._proxy.index(proxy_row, column))

        descending = self._proxy.sortOrder() is Qt.SortOrder.DescendingOrder
        before = row > 0 and self._proxy.lessThan(key(row), key(row - 1)) != descending
        after = row + 1 < self._proxy.rowCount() and (
            self._proxy.lessThan(key(row + 1), key(row)) != descending
        )
        return not (before or after)

    def pointer(self, over: bool) -> None:
        """The pointer came over the rows, or left them (then the order is checked)."""
        self._pointer_over = over
        if not over:
            self.check()
