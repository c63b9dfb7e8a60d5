"""The editor's "Once, at": a new one-off saved at the time picked in its zone, an edit of a one-off
that keeps it (even once done), and unticking it that makes the schedule recurring again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QDateTime, Qt
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QDateTimeEdit, QLineEdit
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.support.fakes import FakeClock

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
COMMAND = {"kind": "command", "argv": ["true"]}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def service(tmp_path: Path, clock: FakeClock) -> Iterator[Service]:
    store = Store.open(tmp_path / "data", now=NOW)
    yield Service(store, clock)
    store.close()


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def editor(qtbot: QtBot, service: Service, schedule_id: int | None = None) -> EditorDialog:
    dialog = EditorDialog(service, now=lambda: NOW, schedule_id=schedule_id)
    qtbot.addWidget(dialog)
    return dialog


def save(qtbot: QtBot, dialog: EditorDialog) -> int:
    button = dialog.findChild(QAbstractButton, "save")
    assert button is not None and button.isEnabled()
    with qtbot.waitSignal(dialog.saved) as saved:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return int(saved.args[0])


def test_a_new_one_off_is_saved_at_the_time_picked_in_its_zone(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    qtbot.keyClicks(dialog.findChild(QLineEdit, "name"), "Gifts")
    qtbot.keyClicks(dialog.findChild(QLineEdit, "command"), "wrap.sh")
    dialog.zone.set_zone("Europe/Riga")
    once = dialog.findChild(QCheckBox, "once")
    assert once is not None and once.text() == "Once, at"
    once.setChecked(True)
    assert not dialog.cron.isEnabled()
    picker = dialog.findChild(QDateTimeEdit, "onceAt")
    assert picker is not None
    picker.setDateTime(QDateTime.fromString("2026-12-24T07:00", "yyyy-MM-ddTHH:mm"))
    stored = service.get_schedule({"id": save(qtbot, dialog)})
    assert stored["once_at"] == "2026-12-24T05:00:00+00:00" and stored["expr"] == "0 7 24 12 *"


def test_a_one_off_is_shown_kept_when_renamed_even_done_and_undone_by_unticking(
    qtbot: QtBot, service: Service, clock: FakeClock
) -> None:
    made = service.create_schedule(
        {"name": "Gifts", "at": "2026-12-24T07:00", "tz": "UTC", "action": COMMAND}
    )
    clock.set_wall(datetime(2026, 12, 30, tzinfo=UTC))  # its time has passed
    dialog = editor(qtbot, service, made["id"])
    once = dialog.findChild(QCheckBox, "once")
    assert once is not None and once.isChecked() and not dialog.has_edits()
    name = dialog.findChild(QLineEdit, "name")
    assert name is not None
    name.setText("Gifts (done)")
    kept = service.get_schedule({"id": save(qtbot, dialog)})
    assert kept["once_at"] == made["once_at"] and kept["name"] == "Gifts (done)"
    dialog = editor(qtbot, service, made["id"])
    dialog.findChild(QCheckBox, "once").setChecked(False)  # type: ignore[union-attr]
    dialog.cron.set_text("0 9 * * *")
    recurring = service.get_schedule({"id": save(qtbot, dialog)})
    assert recurring["once_at"] is None and recurring["expr"] == "0 9 * * *"


def test_run_in_the_background_is_saved_and_shown_again(qtbot: QtBot, service: Service) -> None:
    made = service.create_schedule({"name": "Backup", "expr": "0 3 * * *", "action": COMMAND})
    dialog = editor(qtbot, service, made["id"])
    box = dialog.findChild(QCheckBox, "background")
    assert box is not None and not box.isChecked()
    assert box.text() == "Run in the background: low CPU and disk priority"
    box.setChecked(True)
    assert service.get_schedule({"id": save(qtbot, dialog)})["policies"]["background"] is True
    again = editor(qtbot, service, made["id"])
    shown = again.findChild(QCheckBox, "background")
    assert shown is not None and shown.isChecked() and not again.has_edits()


def test_the_next_runs_say_which_one_is_skipped(qtbot: QtBot, service: Service) -> None:
    from domi_desktop.frontdoor.service import METHODS

    made = service.create_schedule(
        {"name": "Daily", "expr": "0 9 * * *", "tz": "UTC", "action": COMMAND}
    )
    METHODS["schedule.skip"](service, {"id": made["id"]})
    dialog = editor(qtbot, service, made["id"])
    table = dialog.preview.table
    first, second = table.item(0, 0), table.item(1, 0)
    assert first is not None and second is not None
    assert first.text().startswith("skipping Tue 2026-12-08 09:00")
    assert not second.text().startswith("skipping")
