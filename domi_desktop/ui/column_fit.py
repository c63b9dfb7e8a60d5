"""A table's columns fitted to their titles: fixed widths, each widened to its header's words,
and one column that takes the room left, but never less than its own title. Where the window is
too narrow for that (200 % on a small screen) the table scrolls sideways rather than squeezing
that column's title to a sliver."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QTableView

Section = TypeVar("Section", bound=int)


def title_width(header: QHeaderView, section: int) -> int:
    """What the section's title needs: bold, as the header draws it over a selected row, with
    room for the sort arrow and the margins beside it."""
    font = header.font()
    font.setBold(True)
    metrics = QFontMetrics(font)
    title = str(header.model().headerData(section, Qt.Orientation.Horizontal))
    return metrics.horizontalAdvance(title) + 2 * metrics.height()


class ColumnFit(QObject):
    """Keeps ``table``'s columns at ``widths`` (widened to their titles) and ``stretch`` at the
    room left or its title's width, whichever is more; refitted as the table is resized."""

    def __init__(self, table: QTableView, widths: Mapping[Section, int], stretch: Section) -> None:
        super().__init__(table)
        self._table = table
        self._widths: dict[int, int] = {int(section): width for section, width in widths.items()}
        self._stretch = int(stretch)
        self._least = 0
        table.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        table.viewport().installEventFilter(self)

    def fit(self) -> None:
        """Every column at least as wide as its title in the current language."""
        header = self._table.horizontalHeader()
        for section, width in self._widths.items():
            if section != self._stretch:
                header.resizeSection(section, max(width, title_width(header, section)))
        self._least = title_width(header, self._stretch)
        self._keep_stretch_readable()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._keep_stretch_readable()
        return False

    def _keep_stretch_readable(self) -> None:
        header = self._table.horizontalHeader()
        others = sum(
            header.sectionSize(section)
            for section in range(header.count())
            if section != self._stretch and not header.isSectionHidden(section)
        )
        squeezed = self._table.viewport().width() - others < self._least
        mode = QHeaderView.ResizeMode.Interactive if squeezed else QHeaderView.ResizeMode.Stretch
        if header.sectionResizeMode(self._stretch) != mode:
            header.setSectionResizeMode(self._stretch, mode)
        if squeezed:
            header.resizeSection(self._stretch, self._least)
