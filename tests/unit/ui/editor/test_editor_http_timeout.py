"""An HTTP job has one timeout in the editor, the Policies box's: it is the request's too, its
"none" is the request's default (not "no limit"), and a request timeout of an older schedule shows
in it."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QDoubleSpinBox, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from tests.unit.ui.editor.test_editor import (
    Open,
    child,
    english,
    open_editor,
    os_zone,
    save_button,
    service,
    store,
    type_into,
)

__all__ = ["english", "open_editor", "os_zone", "service", "store"]  # the editor tests' fixtures


def test_an_http_job_has_one_timeout_which_is_the_request_s(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    dialog = open_editor()
    type_into(qtbot, child(dialog, QLineEdit, "name"), "ping")
    child(dialog, QAbstractButton, "kindHttp").setChecked(True)
    type_into(qtbot, child(dialog, QLineEdit, "httpUrl"), "https://example.org/health")
    spins = [*dialog.findChildren(QDoubleSpinBox), *dialog.findChildren(QSpinBox)]
    assert [s.objectName() for s in spins if "imeout" in s.objectName()] == ["timeout"]
    timeout = child(dialog, QSpinBox, "timeout")
    assert timeout.value() == 0 and timeout.specialValueText() == "Default (30 s)"
    timeout.setValue(12)
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        save_button(dialog).click()
    stored = service.get_schedule({"id": saved.args[0]})
    assert stored["action"]["timeout"] == 12.0 and stored["policies"]["timeout"] == 12.0

    child(dialog, QAbstractButton, "kindCommand").setChecked(True)
    assert timeout.specialValueText() == "No limit"


def test_a_request_timeout_of_its_own_shows_in_the_one_field(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    made = service.create_schedule(
        {"name": "slow", "expr": "@hourly", "tz": "UTC",
         "action": {"kind": "http", "url": "https://example.org/slow", "timeout": 90}}
    )  # fmt: skip
    dialog = open_editor(schedule_id=made["id"])
    assert child(dialog, QSpinBox, "timeout").value() == 90
    assert not dialog.has_edits()
