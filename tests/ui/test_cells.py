"""A repaint of the History enters Python once per cell (multiData), not once per role."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction
from domi_desktop.store import Store
from domi_desktop.ui.cells import fill_roles
from domi_desktop.ui.history_model import RunsModel

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        schedule = opened.create_schedule("x", "* * * * *", "UTC", CommandAction(), now=NOW)
        for _ in range(60):
            opened.record_manual_run(schedule.id, NOW)
        yield opened


class Counting(RunsModel):
    """Counts the roles asked of ``data``: by ``fill_roles`` (one call from Qt per cell, in
    ``multiData``) or straight from Qt (one call per role)."""

    def __init__(self, store: Store) -> None:
        self.cells = self.roles_from_qt = 0
        super().__init__(store)

    def data(self, index: Any, role: int = 0) -> Any:
        if sys._getframe(1).f_code is fill_roles.__code__:
            self.cells += 1
        else:
            self.roles_from_qt += 1
        return super().data(index, role)


def test_a_repaint_asks_each_cell_once(qtbot: QtBot, store: Store) -> None:
    model = Counting(store)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(900, 400)
    with qtbot.waitExposed(view):
        view.show()
    model.cells = model.roles_from_qt = 0
    view.viewport().repaint()
    assert model.cells > 0
    assert model.roles_from_qt == 0
