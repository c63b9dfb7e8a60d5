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

from domi_desktop.ui.history.model import Column, RunsModel, alignment

AnyIndex = QModelIndex | QPersistentModelIndex
_NO_PARENT = QModelIndex()
_DISPLAY, _FOREGROUND = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole


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
        shown = self._runs.shown(row)
        items = []
        for column, text, brush in zip(Column, shown.texts, shown.brushes, strict=True):
            item = QStandardItem(text)
            item.setEditable(False)
            item.setToolTip(shown.tooltip)  # the run's, the same in every cell
            if brush is not None:
                item.setForeground(brush)
            align = alignment(column)
            if align is not None:
                item.setTextAlignment(align)
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
            shown = self._runs.shown(row)
            for column in range(top_left.column(), bottom_right.column() + 1):
                item = self.item(row, column)
                if item is None:
                    continue
                item.setText(shown.texts[column])
                item.setToolTip(shown.tooltip)
                item.setData(shown.brushes[column], _FOREGROUND)

    def _reset(self) -> None:
        self.setRowCount(0)
        if self._runs.rowCount():
            self._inserted(_NO_PARENT, 0, self._runs.rowCount() - 1)

    def _headers(self, *_changed: object) -> None:
        for column in Column:
            label = self._runs.headerData(column, Qt.Orientation.Horizontal)
            self.setHeaderData(column, Qt.Orientation.Horizontal, label)
