"""The schedules at a glance; where the app lives when the desktop has no tray."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.ui.backend import AppBackend
from domi_desktop.ui.i18n import person_time, tr
from domi_desktop.ui.icons import load_icon


class WindowActions(Protocol):
    """What the window's buttons ask of the tray app."""

    def open_editor(self, schedule_id: int | None) -> None: ...

    def open_history(self, schedule_id: int | None) -> None: ...

    def open_settings(self) -> None: ...

    def run_now(self, schedule_id: int) -> None: ...


class MainWindow(QMainWindow):
    """The schedules at a glance; where the app lives when the desktop has no tray."""

    def __init__(self, host: AppBackend, actions: WindowActions) -> None:
        super().__init__()
        self._host = host
        self._app = actions
        self.setWindowTitle(tr("domi-desktop"))
        self.setWindowIcon(load_icon("idle"))
        self.resize(760, 420)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        title = QLabel(f"<h2>{tr('Schedules')}</h2>")
        layout.addWidget(title)
        self.table = QTableWidget(0, 4, central)
        self.table.setObjectName("schedulesTable")
        self.table.setHorizontalHeaderLabels([tr("Name"), tr("Cron"), tr("Zone"), tr("Next fire")])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.doubleClicked.connect(lambda _index: self._edit_selected())
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        for text, slot in (
            (tr("New…"), lambda: self._app.open_editor(None)),
            (tr("Edit"), self._edit_selected),
            (tr("Run now"), self._run_selected),
            (tr("History"), lambda: self._app.open_history(self._selected())),
            (tr("Settings"), self._app.open_settings),
        ):
            button = QPushButton(text, central)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.setCentralWidget(central)

    def refresh(self) -> None:
        schedules = self._host.runs.list_schedules()
        self.table.setRowCount(len(schedules))
        for row, schedule in enumerate(schedules):
            upcoming = self._host.next_fire(schedule.id)
            when = person_time(upcoming, schedule.tz) if upcoming else tr("paused")
            for column, text in enumerate((schedule.name, schedule.expr, schedule.tz, when)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, schedule.id)
                self.table.setItem(row, column, item)

    def _selected(self) -> int | None:
        items = self.table.selectedItems()
        return int(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _edit_selected(self) -> None:
        schedule_id = self._selected()
        if schedule_id is not None:
            self._app.open_editor(schedule_id)

    def _run_selected(self) -> None:
        schedule_id = self._selected()
        if schedule_id is not None:
            self._app.run_now(schedule_id)

    def showEvent(self, event: Any) -> None:
        self.refresh()
        super().showEvent(event)
