"""The editor's Monitoring box: a save round-trips the schedule's monitor through the service, a
bad URL keeps Save disabled, and emptied fields remove the monitor."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.model import Monitor
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    store = Store.open(tmp_path / "data", now=NOW)
    yield Service(store, FakeClock(NOW))
    store.close()


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def child(root: QWidget, kind: type[Any], name: str) -> Any:
    found = root.findChild(kind, name)
    assert found is not None, f"no {kind.__name__} named {name!r}"
    return found


def test_a_save_round_trips_the_monitor_and_emptied_fields_remove_it(
    qtbot: QtBot, service: Service
) -> None:
    dialog = EditorDialog(service, now=lambda: NOW)
    qtbot.addWidget(dialog)
    child(dialog, QLineEdit, "name").setText("Backup")
    child(dialog, QLineEdit, "command").setText("backup --all")
    child(dialog, QLineEdit, "healthchecksKey").setText("hc-key")
    child(dialog, QLineEdit, "healthchecksApi").setText("https://hc.example.org")
    child(dialog, QSpinBox, "monitorGrace").setValue(45)
    webhook: QLineEdit = child(dialog, QLineEdit, "webhook")
    webhook.setText("ftp://nope")
    save: QAbstractButton = child(dialog, QAbstractButton, "save")
    qtbot.waitUntil(lambda: not save.isEnabled())
    webhook.setText("https://ntfy.sh/jobs")
    qtbot.waitUntil(save.isEnabled)
    with qtbot.waitSignal(dialog.saved) as saved:
        save.click()
    stored = service.get_schedule({"id": saved.args[0]})
    assert parse_policies(stored["policies"]).monitor == Monitor(
        healthchecks_key="hc-key",
        healthchecks_api="https://hc.example.org",
        grace=timedelta(minutes=45),
        webhook="https://ntfy.sh/jobs",
    )

    again = EditorDialog(service, now=lambda: NOW, schedule_id=saved.args[0])
    qtbot.addWidget(again)
    assert child(again, QLineEdit, "healthchecksKey").text() == "hc-key"
    assert not again.has_edits()
    for name in ("healthchecksKey", "healthchecksApi", "webhook"):
        child(again, QLineEdit, name).clear()
    with qtbot.waitSignal(again.saved):
        child(again, QAbstractButton, "save").click()
    cleared = service.get_schedule({"id": saved.args[0]})["policies"]
    assert parse_policies(cleared).monitor == Monitor()
