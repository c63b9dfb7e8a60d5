"""The editor's Notes box, offscreen over a real store: typed notes are saved with the schedule,
an edit shows them and saves a change, notes the service would refuse stop Save with a message
under the box (in Chinese too), and Tab leaves the box."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import MAX_NOTES
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.support.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)
COMMAND = {"kind": "command", "argv": ["true"]}


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


def editor(qtbot: QtBot, service: Service, **options: Any) -> EditorDialog:
    dialog = EditorDialog(service, now=lambda: NOW, **options)
    qtbot.addWidget(dialog)
    return dialog


def child(root: QWidget, kind: type[Any], name: str) -> Any:
    found = root.findChild(kind, name)
    assert found is not None, f"no {kind.__name__} named {name!r}"
    return found


def notes_box(dialog: EditorDialog) -> QPlainTextEdit:
    box: QPlainTextEdit = child(dialog, QPlainTextEdit, "notes")
    return box


def save(dialog: EditorDialog) -> QAbstractButton:
    button: QAbstractButton = child(dialog, QAbstractButton, "save")
    return button


def test_typed_notes_of_several_lines_are_saved_with_a_new_schedule(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), "Backup")
    qtbot.keyClicks(child(dialog, QLineEdit, "command"), "backup.sh")
    box = notes_box(dialog)
    qtbot.keyClicks(box, "Keeps the NAS copy.")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.keyClicks(box, "Fails? Call Ana <ops>")
    assert dialog.has_edits()
    with qtbot.waitSignal(dialog.saved) as saved:
        qtbot.mouseClick(save(dialog), Qt.MouseButton.LeftButton)
    stored = service.get_schedule({"id": saved.args[0]})
    assert stored["notes"] == "Keeps the NAS copy.\nFails? Call Ana <ops>"


def test_an_edit_shows_the_notes_and_saves_only_what_changed(
    qtbot: QtBot, service: Service
) -> None:
    created = service.create_schedule(
        {"name": "Report", "expr": "0 9 * * *", "action": COMMAND, "notes": "owner:\tops\n"}
    )
    dialog = editor(qtbot, service, schedule_id=created["id"])
    box = notes_box(dialog)
    assert box.toPlainText() == "owner:\tops\n"
    assert not dialog.has_edits()
    box.moveCursor(box.textCursor().MoveOperation.End)
    qtbot.keyClicks(box, "then Ana")
    assert dialog.has_edits()
    with qtbot.waitSignal(dialog.saved):
        qtbot.mouseClick(save(dialog), Qt.MouseButton.LeftButton)
    stored = service.get_schedule({"id": created["id"]})
    assert (stored["name"], stored["notes"]) == ("Report", "owner:\tops\nthen Ana")


@pytest.mark.parametrize(
    ("text", "in_english", "in_chinese"),
    [
        (
            "x" * (MAX_NOTES + 1),
            f"The notes are too long ({MAX_NOTES + 1} characters, at most {MAX_NOTES}).",
            f"备注太长（{MAX_NOTES + 1} 个字符，最多 {MAX_NOTES} 个）。",
        ),
        (
            "see \x1b[31mred",
            "The notes hold a control character: remove it (text, new lines and tabs).",
            "备注中有控制字符：请删除它（只能是文字、换行和制表符）。",
        ),
    ],
)
def test_notes_the_service_would_refuse_stop_save_with_a_message_under_the_box(
    qtbot: QtBot, service: Service, text: str, in_english: str, in_chinese: str
) -> None:
    created = service.create_schedule(
        {"name": "Report", "expr": "0 9 * * *", "action": COMMAND, "notes": "kept"}
    )
    dialog = editor(qtbot, service, schedule_id=created["id"])
    notes_box(dialog).setPlainText(text)
    error: QLabel = child(dialog, QLabel, "notesError")
    assert not error.isHidden() and error.text() == in_english
    assert not save(dialog).isEnabled() and save(dialog).toolTip() == in_english
    i18n.set_language("zh")
    dialog.retranslate()
    assert error.text() == in_chinese
    notes_box(dialog).setPlainText("fine again")
    assert error.isHidden() and save(dialog).isEnabled()
    assert service.get_schedule({"id": created["id"]})["notes"] == "kept"


def test_tab_leaves_the_notes_box_and_leaves_its_text_alone(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    dialog.show()
    qtbot.waitExposed(dialog)
    box = notes_box(dialog)
    box.setPlainText("why")
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Tab)
    assert box.toPlainText() == "why"
    assert dialog.focusWidget() is not box
