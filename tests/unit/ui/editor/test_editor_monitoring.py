"""The editor's Monitoring box: a save round-trips the schedule's monitor through the service, a
bad URL keeps Save disabled, and emptied fields remove the monitor."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtWidgets import QAbstractButton, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.model import Monitor
from domi_desktop.ui.editor.dialog import EditorDialog

# The editor tests' fixtures (a service on a real store, English, the OS zone) are the
# conditions box's: imported, so they are the same fixtures.
from tests.unit.ui.editor.test_editor_conditions import (  # noqa: F401
    NOW,
    child,
    english,
    os_zone,
    service,
)


def test_a_save_round_trips_the_monitor_and_emptied_fields_remove_it(
    qtbot: QtBot,
    service: Service,  # noqa: F811
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
