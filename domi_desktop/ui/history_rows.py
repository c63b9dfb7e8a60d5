"""The History's rows as the table shows them, held on the C++ side.

A view paints from its model, and a Python model is called for every cell of every repaint:
during a catch-up, with hundreds of job threads taking the GIL in turn, each of those calls
waited for it (the loop stood still 150-200 ms a repaint). ``RunsModel`` keeps the logic (pages,
filters, which runs changed); this copy of what it shows is a ``QStandardItemModel`` filled from
Python once per change, in one go, so that painting never enters the interpreter.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from domi_desktop.ui.history_model import Column, RunsModel

AnyIndex = QModelIndex | QPersistentModelIndex
_NO_PARENT = QModelIndex()
_DISPLAY, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
_STYLE = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.TextAlignmentRole)
_ROLES = (_DISPLAY, _TOOLTIP, *_STYLE)


class ShownRows(QStandardItemModel):
    def __init__(self, runs: RunsModel, parent: QObject | None = None) -> None:
        super().__init__(0, len(Column), parent)
        self._runs = runs
        runs.rowsInserted.connect(self._inserted)
        runs.rowsRemoved.connect(self._removed)
        runs.dataChanged.connect(self._changed)
        runs.modelReset.connect(self._reset)
        runs.headerDataChanged.connect(self._headers)
        self._headers()
        self._reset()

    # Scrolling to the end asks for the next page of runs.
    def canFetchMore(self, parent: AnyIndex = _NO_PARENT) -> bool:
        return not parent.isValid() and self._runs.canFetchMore()

    def fetchMore(self, parent: AnyIndex = _NO_PARENT) -> None:
        if not parent.isValid():
            self._runs.fetchMore()

    def _row(self, row: int) -> list[QStandardItem]:
        runs = self._runs
        tooltip = runs.data(runs.index(row, 0), _TOOLTIP)  # the run's, the same in every cell
        items = []
        for column in Column:
            index = runs.index(row, column)
            item = QStandardItem(runs.data(index, _DISPLAY))
            item.setEditable(False)
            item.setToolTip(tooltip)
            for role in _STYLE:
                value = runs.data(index, role)
                if value is not None:
                    item.setData(value, role)
            items.append(item)
        return items

    def _inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        rows = [self._row(row) for row in range(first, last + 1)]
        if first == self.rowCount():
            for items in rows:
                self.appendRow(items)
        else:
            for offset, items in enumerate(rows):
                self.insertRow(first + offset, items)

    def _removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        self.removeRows(first, last - first + 1)

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex, *_roles: object) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            for column in range(top_left.column(), bottom_right.column() + 1):
                item = self.item(row, column)
                if item is None:
                    continue
                index = self._runs.index(row, column)
                for role in _ROLES:
                    item.setData(self._runs.data(index, role), role)

    def _reset(self) -> None:
        self.setRowCount(0)
        if self._runs.rowCount():
            self._inserted(_NO_PARENT, 0, self._runs.rowCount() - 1)

    def _headers(self, *_changed: object) -> None:
        for column in Column:
            label = self._runs.headerData(column, Qt.Orientation.Horizontal)
            self.setHeaderData(column, Qt.Orientation.Horizontal, label)
