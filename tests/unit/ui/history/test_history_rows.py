"""A repaint of the History never calls into Python: the table shows a copy of the rows held
on the C++ side (``ShownRows``), filled once per change."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, RunStatus
from domi_desktop.store import Store
from domi_desktop.ui.history.model import Column, RunsModel
from domi_desktop.ui.history.rows import ShownRows

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        schedule = opened.create_schedule("x", "* * * * *", "UTC", CommandAction(), now=NOW)
        for minute in range(60):
            opened.record_manual_run(schedule.id, NOW + timedelta(minutes=minute))
        yield opened


class Counting(RunsModel):
    def __init__(self, store: Store) -> None:
        self.calls = 0
        super().__init__(store)

    def data(self, index: Any, role: int = 0) -> Any:
        self.calls += 1
        return super().data(index, role)


def shown(model: Any, count: int) -> list[list[dict[Qt.ItemDataRole, object]]]:
    """Every role a cell may have, of the first ``count`` rows, as the view would read them."""
    roles = (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.TextAlignmentRole,
    )

    def value(row: int, column: Column, role: Qt.ItemDataRole) -> object:
        data = model.index(row, column).data(role)
        if role is Qt.ItemDataRole.ForegroundRole and data is not None:
            return data.color().name()
        if role is Qt.ItemDataRole.TextAlignmentRole and data is not None:
            return int(data)
        return data

    return [
        [{role: value(row, column, role) for role in roles} for column in Column]
        for row in range(count)
    ]


def test_a_repaint_does_not_call_into_python_and_the_rows_follow_the_runs(
    qtbot: QtBot, store: Store
) -> None:
    runs = Counting(store)
    rows = ShownRows(runs)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(rows)
    view.resize(900, 400)
    with qtbot.waitExposed(view):
        view.show()
    runs.calls = 0
    view.viewport().repaint()
    assert runs.calls == 0
    assert rows.rowCount() == runs.rowCount() == 60
    assert [rows.index(r, Column.schedule).data() for r in range(3)] == ["x", "x", "x"]
    # A run that ended: its row is written again; one inserted on top appears there.
    newest = runs.run_at(0)
    store.start_run(newest.id, NOW)
    store.finish_run(newest.id, status=RunStatus.failed, finished_at=NOW, exit_code=3)
    added = store.record_manual_run(newest.schedule_id, NOW + timedelta(hours=2))
    runs.update_runs([newest.id, added])
    assert rows.rowCount() == 61
    assert rows.index(0, Column.exit_code).data() == ""
    assert rows.index(1, Column.exit_code).data() == "3"
    assert shown(rows, 3) == shown(runs, 3)
    assert shown(rows, 3)[1][Column.status][Qt.ItemDataRole.ForegroundRole] is not None  # failed
    assert rows.headerData(Column.exit_code, Qt.Orientation.Horizontal) == runs.headerData(
        Column.exit_code, Qt.Orientation.Horizontal
    )
