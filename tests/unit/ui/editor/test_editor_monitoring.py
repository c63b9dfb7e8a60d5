"""The editor's Monitoring box: a save round-trips the schedule's monitor through the service, a
bad URL keeps Save disabled, and emptied fields remove the monitor."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.model import Monitor
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.support.fakes import FakeClock

# The editor tests' fixtures (a service on a real store, English, the OS zone) are the
# conditions box's: imported, so they are the same fixtures.
from tests.unit.ui.editor.test_editor_conditions import (  # noqa: F401
    NOW,
    child,
    english,
    os_zone,
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """A service whose secrets hold the API key's name: a name no secret has is refused where
    it is typed, and the keyring of the machine running the tests is nobody's business here."""
    store = Store.open(tmp_path / "data", now=NOW)
    yield Service(store, FakeClock(NOW), secrets=MemorySecretStore({"hc-key": "hcw_key"}))
    store.close()


def test_a_save_round_trips_the_monitor_and_emptied_fields_remove_it(
    qtbot: QtBot,
    service: Service,
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
