"""The schedule editor over a real store: live cron validation, preview, zones, the sleep panel,
saving and editing through the service, and the Chinese catalog."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import available_timezones

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTableWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.service import Service
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.sleep import Scenario
from domi_desktop.ui.editor.widgets import PairsTable
from tests.support.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)
"""A Tuesday, five days before New York springs forward (2024-03-10)."""
SECRET_VALUE = "s3cr3t-value-never-shown"
"""What the keychain holds for API_TOKEN; the editor lists the name and never reads the value."""


class UnreadableSecrets(MemorySecretStore):
    def get(self, name: str) -> str:
        raise AssertionError(f"the editor read the value of secret {name!r}")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=NOW)
    yield opened
    opened.close()


@pytest.fixture
def service(store: Store) -> Service:
    return Service(store, FakeClock(NOW))


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture(autouse=True)
def os_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The OS zone decides the preview's second column: make it the same on every machine.
    monkeypatch.setenv("TZ", "Europe/Riga")


Open = Callable[..., EditorDialog]


@pytest.fixture
def open_editor(qtbot: QtBot, service: Service) -> Open:
    secrets = UnreadableSecrets({"API_TOKEN": SECRET_VALUE, "SLACK_HOOK": "hook-value"})

    def open_(**options: Any) -> EditorDialog:
        dialog = EditorDialog(service, secret_names=secrets.names, now=lambda: NOW, **options)
        qtbot.addWidget(dialog)
        return dialog

    return open_


def child(dialog: QWidget, kind: type[Any], name: str) -> Any:
    found = dialog.findChild(kind, name)
    assert found is not None, f"no {kind.__name__} named {name!r}"
    return found


def type_into(qtbot: QtBot, widget: QWidget, text: str) -> None:
    """Replace the field's text keystroke by keystroke, as a person would."""
    if isinstance(widget, QPlainTextEdit):
        widget.selectAll()
        qtbot.keyClick(widget, Qt.Key.Key_Delete)
    else:
        assert isinstance(widget, QLineEdit)
        widget.clear()
    qtbot.keyClicks(widget, text)


def fill_valid(qtbot: QtBot, dialog: EditorDialog) -> None:
    type_into(qtbot, child(dialog, QLineEdit, "name"), "Rate-limit report")
    type_into(qtbot, child(dialog, QLineEdit, "command"), "python3 report.py --endpoint login")


def save_button(dialog: EditorDialog) -> QAbstractButton:
    return child(dialog, QAbstractButton, "save")


def underlined(dialog: EditorDialog) -> list[tuple[int, int]]:
    spans = []
    for selection in child(dialog, QPlainTextEdit, "cron").extraSelections():
        assert (
            selection.format.underlineStyle() == QTextCharFormat.UnderlineStyle.SpellCheckUnderline
        )
        spans.append((selection.cursor.selectionStart(), selection.cursor.selectionEnd()))
    return spans


def preview_rows(dialog: EditorDialog) -> list[list[str]]:
    table: QTableWidget = child(dialog, QTableWidget, "preview")
    return [
        [table.item(row, column).text() for column in range(table.columnCount())]
        for row in range(table.rowCount())
    ]


def database_bytes(tmp_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in (tmp_path / "data").glob("domi.sqlite3*"))


# -- the cron field ----------------------------------------------------------------------------


def test_an_out_of_range_value_is_underlined_exactly_and_save_is_disabled(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    fill_valid(qtbot, dialog)
    type_into(qtbot, child(dialog, QPlainTextEdit, "cron"), "61 9 * * *")
    assert underlined(dialog) == [(0, 2)]
    error = child(dialog, QLabel, "cronError")
    assert not error.isHidden()
    assert error.text() == "minute: 61 is out of range 0-59"
    assert child(dialog, QLabel, "description").isHidden()
    assert not save_button(dialog).isEnabled()


def test_an_error_in_the_middle_of_the_expression_underlines_only_that_field(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    type_into(qtbot, child(dialog, QPlainTextEdit, "cron"), "0 9 30 2 *")
    assert underlined(dialog) == [(4, 6)]
    assert "February never has day 30" in child(dialog, QLabel, "cronError").text()


def test_fixing_the_expression_enables_save_and_describes_it(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    fill_valid(qtbot, dialog)
    cron = child(dialog, QPlainTextEdit, "cron")
    type_into(qtbot, cron, "0 9 * * 1-")
    assert not save_button(dialog).isEnabled()
    qtbot.keyClicks(cron, "5")
    assert underlined(dialog) == []
    assert child(dialog, QLabel, "cronError").isHidden()
    description = child(dialog, QLabel, "description")
    assert not description.isHidden()
    assert description.text() == "At 09:00, Monday through Friday"
    assert save_button(dialog).isEnabled()


def test_the_cron_field_stays_on_one_line_when_enter_is_pressed(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    dialog.show()
    fill_valid(qtbot, dialog)
    cron = child(dialog, QPlainTextEdit, "cron")
    type_into(qtbot, cron, "*/5 * * * *")
    with qtbot.assertNotEmitted(dialog.saved):
        qtbot.keyClick(cron, Qt.Key.Key_Return)
        qtbot.keyClick(cron, Qt.Key.Key_Enter)
    assert cron.toPlainText() == "*/5 * * * *"
    assert dialog.isVisible()  # Enter neither broke the line nor pressed Save


def test_presets_fill_the_field_and_a_typed_preset_is_recognised(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    presets: QComboBox = child(dialog, QComboBox, "presets")
    cron = child(dialog, QPlainTextEdit, "cron")
    presets.setCurrentIndex(presets.findText("Weekdays at 09:00"))
    assert cron.toPlainText() == "0 9 * * 1-5"
    presets.setCurrentIndex(presets.findText("Every 5 minutes"))
    assert cron.toPlainText() == "*/5 * * * *"
    type_into(qtbot, cron, "0 * * * *")
    assert presets.currentText() == "Hourly"
    qtbot.keyClicks(cron, "1")  # "0 * * * *1" is no preset (nor valid)
    assert presets.currentText() == "Custom"


# -- preview and zones -------------------------------------------------------------------------


def test_the_preview_lists_ten_fires_in_the_zone_and_marks_the_dst_day(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    type_into(qtbot, child(dialog, QPlainTextEdit, "cron"), "30 2 * * *")
    zone: QComboBox = child(dialog, QComboBox, "zone")
    zone.setCurrentIndex(zone.findText("America/New_York"))
    rows = preview_rows(dialog)
    assert len(rows) == 10
    assert all(len(row) == 2 for row in rows)  # New York, and this computer (Riga)
    assert rows[0] == ["Wed 2024-03-06 02:30 EST", "Wed 2024-03-06 09:30 EET"]
    dst_rows = [index for index, row in enumerate(rows) if "DST" in row[0]]
    assert dst_rows == [4]
    # The 02:30 that does not exist that day fires at the first instant after the gap.
    assert rows[4][0] == "Sun 2024-03-10 03:00 EDT  DST"
    assert rows[5][0] == "Mon 2024-03-11 02:30 EDT"
    assert rows[9][0].startswith("Fri 2024-03-15 02:30")


def test_a_schedule_in_the_local_zone_has_a_single_preview_column(open_editor: Open) -> None:
    dialog = open_editor()
    zone: QComboBox = child(dialog, QComboBox, "zone")
    assert zone.currentText() == "Local (Europe/Riga)"
    rows = preview_rows(dialog)
    assert all(len(row) == 1 for row in rows)
    assert rows[0] == ["Wed 2024-03-06 09:00 EET"]


def test_refresh_preview_follows_the_injected_clock(service: Service, qtbot: QtBot) -> None:
    moments = [NOW]
    dialog = EditorDialog(service, secret_names=list, now=lambda: moments[0])
    qtbot.addWidget(dialog)
    moments[0] = datetime(2024, 3, 9, 12, 0, tzinfo=UTC)
    dialog.refresh_preview()
    assert preview_rows(dialog)[0] == ["Sun 2024-03-10 09:00 EET"]


def test_searching_the_zones_for_howe_finds_lord_howe(qtbot: QtBot, open_editor: Open) -> None:
    dialog = open_editor()
    zone: QComboBox = child(dialog, QComboBox, "zone")
    line = zone.lineEdit()
    line.clear()
    qtbot.keyClicks(line, "howe")
    model = zone.completer().completionModel()
    found = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert "Australia/Lord_Howe" in found


def test_an_unknown_zone_disables_save_and_says_so(qtbot: QtBot, open_editor: Open) -> None:
    dialog = open_editor()
    fill_valid(qtbot, dialog)
    assert save_button(dialog).isEnabled()
    line = child(dialog, QComboBox, "zone").lineEdit()
    line.clear()
    qtbot.keyClicks(line, "Mars/Olympus_Mons")
    assert not save_button(dialog).isEnabled()
    assert "Mars/Olympus_Mons" in child(dialog, QLabel, "zoneError").text()
    assert all(cell == "" for row in preview_rows(dialog) for cell in row)
    line.clear()
    qtbot.keyClicks(line, "asia/tokyo")  # any case, as long as it names a zone
    assert save_button(dialog).isEnabled()
    assert child(dialog, QLabel, "zoneError").isHidden()


# -- the sleep panel ---------------------------------------------------------------------------


def simulate(dialog: EditorDialog, scenario: Scenario) -> str:
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    combo.setCurrentIndex(combo.findData(scenario.name))
    return str(child(dialog, QLabel, "simulateResult").text())


def test_asleep_three_days_runs_once_late_and_skips_two(open_editor: Open) -> None:
    dialog = open_editor()
    assert child(dialog, QPlainTextEdit, "cron").toPlainText() == "0 9 * * *"
    result = simulate(dialog, Scenario.three_days)
    assert result == "Runs once, late (catch-up); 2 earlier runs skipped."
    details = child(dialog, QLabel, "simulateDetails").text()
    # Riga: due Wed 09:00 (now is Tue 14:00), asleep from 08:30 until Sat 08:30.
    assert "sleeps from Wed 03-06 08:30 to Sat 03-09 08:30" in details
    assert "runs once for Fri 03-08 09:00, late" in details
    assert "2 earlier runs skipped: Wed 03-06 09:00, Thu 03-07 09:00" in details


def test_each_scenario_tells_its_outcome(open_editor: Open) -> None:
    dialog = open_editor()
    assert simulate(dialog, Scenario.before) == "Runs once, on time."
    details = child(dialog, QLabel, "simulateDetails").text()
    assert "Wed 03-06 08:30: nothing is due yet, no run." in details
    assert "Wed 03-06 09:00: runs for Wed 03-06 09:00, on time." in details
    assert simulate(dialog, Scenario.just_after) == "Runs once, on time."
    assert simulate(dialog, Scenario.hour_late) == "Runs once, late (catch-up)."


def test_the_sleep_panel_follows_the_edited_expression_and_policies(
    qtbot: QtBot, open_editor: Open
) -> None:
    dialog = open_editor()
    simulate(dialog, Scenario.three_days)
    result = child(dialog, QLabel, "simulateResult")
    within = child(dialog, QWidget, "catchUpWithin")
    within.setValue(12)  # the fire is 23.5 h late: outside a 12 h window
    assert result.text() == "Does not run: skipped by the catch-up policy; 2 earlier runs skipped."
    assert (
        "older than the catch-up window (12 h)" in child(dialog, QLabel, "simulateDetails").text()
    )
    within.setValue(0)
    catch_up: QComboBox = child(dialog, QComboBox, "catchUp")
    catch_up.setCurrentIndex(catch_up.findData("skip"))
    assert result.text().startswith("Does not run")
    catch_up.setCurrentIndex(catch_up.findData("latest"))
    type_into(qtbot, child(dialog, QPlainTextEdit, "cron"), "0 9 * * 1")
    assert result.text() == "Runs once, late (catch-up)."  # weekly: nothing earlier to skip
    qtbot.keyClicks(child(dialog, QPlainTextEdit, "cron"), "9")
    assert result.text() == "Fix the schedule above to see what would happen."


# -- saving and editing ------------------------------------------------------------------------


def test_saving_creates_the_schedule_with_its_action_policies_and_secret_names(
    qtbot: QtBot, open_editor: Open, service: Service, tmp_path: Path
) -> None:
    dialog = open_editor()
    fill_valid(qtbot, dialog)
    type_into(qtbot, child(dialog, QLineEdit, "command"), "report --title 'rate limits' login")
    type_into(qtbot, child(dialog, QLineEdit, "cwd"), "/srv/reports")
    child(dialog, PairsTable, "env").add_row("LANG", "C.UTF-8")
    secret_env: PairsTable = child(dialog, PairsTable, "secretEnv")
    secret_env.add_row("API_TOKEN_VAR")
    assert not save_button(dialog).isEnabled()  # a secret row without a secret picked
    secret_combo = secret_env.table.cellWidget(0, 1)
    assert isinstance(secret_combo, QComboBox)
    assert [secret_combo.itemText(i) for i in range(secret_combo.count())] == [
        "API_TOKEN",
        "SLACK_HOOK",
    ]
    secret_combo.setCurrentIndex(0)
    zone: QComboBox = child(dialog, QComboBox, "zone")
    zone.setCurrentIndex(zone.findText("Europe/Berlin"))
    overlap: QComboBox = child(dialog, QComboBox, "overlap")
    overlap.setCurrentIndex(overlap.findData("queue"))
    child(dialog, QWidget, "catchUpWithin").setValue(12)
    child(dialog, QWidget, "timeout").setValue(600)
    child(dialog, QWidget, "retries").setValue(2)
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        qtbot.mouseClick(save_button(dialog), Qt.MouseButton.LeftButton)
    assert dialog.result() == EditorDialog.DialogCode.Accepted
    stored = service.get_schedule({"id": saved.args[0]})
    assert (stored["name"], stored["expr"], stored["tz"]) == (
        "Rate-limit report",
        "0 9 * * *",
        "Europe/Berlin",
    )
    assert stored["action"] == {
        "kind": "command",
        "argv": ["report", "--title", "rate limits", "login"],
        "shell": None,
        "cwd": "/srv/reports",
        "env": {"LANG": "C.UTF-8"},
        "secret_env": {"API_TOKEN_VAR": "API_TOKEN"},
        "stdin": None,
    }
    assert stored["policies"] == {
        "catch_up": "latest",
        "catch_up_within": 43200.0,
        "overlap": "queue",
        "concurrency_key": None,
        "timeout": 600.0,
        "retries": 2,
        "retry_backoff": 30.0,
        "jitter": 0.0,
        "wake_to_run": False,
    }
    assert not any(SECRET_VALUE in text for text in visible_texts(dialog))
    assert SECRET_VALUE.encode() not in database_bytes(tmp_path)


def test_a_shell_line_and_an_http_request_save_in_their_own_shapes(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    dialog = open_editor()
    fill_valid(qtbot, dialog)
    type_into(qtbot, child(dialog, QLineEdit, "command"), "report | tee -a ~/report.log")
    child(dialog, QAbstractButton, "shell").setChecked(True)
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        save_button(dialog).click()
    action = service.get_schedule({"id": saved.args[0]})["action"]
    assert (action["argv"], action["shell"]) == ([], "report | tee -a ~/report.log")

    dialog = open_editor()
    type_into(qtbot, child(dialog, QLineEdit, "name"), "ping")
    child(dialog, QAbstractButton, "kindHttp").setChecked(True)
    assert not save_button(dialog).isEnabled()
    url = child(dialog, QLineEdit, "httpUrl")
    type_into(qtbot, url, "ftp://example.org/health")
    assert not save_button(dialog).isEnabled()
    assert "http:// or https://" in child(dialog, QLabel, "actionError").text()
    type_into(qtbot, url, "https://example.org/health")
    child(dialog, QComboBox, "httpMethod").setCurrentText("POST")
    secret_headers: PairsTable = child(dialog, PairsTable, "secretHeaders")
    secret_headers.add_row("Authorization", "SLACK_HOOK")
    child(dialog, QPlainTextEdit, "httpBody").setPlainText('{"endpoint": "login"}')
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        save_button(dialog).click()
    reopened = open_editor(schedule_id=saved.args[0])
    assert child(reopened, QLineEdit, "httpUrl").isVisibleTo(reopened)
    assert not child(reopened, QLineEdit, "command").isVisibleTo(reopened)
    assert child(reopened, QComboBox, "httpMethod").currentText() == "POST"
    assert service.get_schedule({"id": saved.args[0]})["action"] == {
        "kind": "http",
        "url": "https://example.org/health",
        "method": "POST",
        "headers": {},
        "secret_headers": {"Authorization": "SLACK_HOOK"},
        "body": '{"endpoint": "login"}',
        "timeout": 30.0,
    }


def test_an_empty_name_or_command_keeps_save_disabled(qtbot: QtBot, open_editor: Open) -> None:
    dialog = open_editor()
    assert not save_button(dialog).isEnabled()
    assert child(dialog, QLabel, "nameError").isHidden()  # no red greeting in a new dialog
    assert child(dialog, QLabel, "status").text() == "A name is required."
    fill_valid(qtbot, dialog)
    assert save_button(dialog).isEnabled()
    name = child(dialog, QLineEdit, "name")
    type_into(qtbot, name, "   ")
    assert not save_button(dialog).isEnabled()
    assert child(dialog, QLabel, "nameError").text() == "A name is required."
    type_into(qtbot, name, "report")
    type_into(qtbot, child(dialog, QLineEdit, "command"), "report 'unclosed")
    assert child(dialog, QLabel, "actionError").text() == "The command has an unclosed quote."
    child(dialog, QLineEdit, "command").clear()
    assert child(dialog, QLabel, "actionError").text() == "Enter the command to run."
    assert not save_button(dialog).isEnabled()
    type_into(qtbot, child(dialog, QLineEdit, "command"), "report")
    env: PairsTable = child(dialog, PairsTable, "env")
    env.add_row("LANG", "C")
    assert save_button(dialog).isEnabled()
    env.table.item(0, 0).setText("")  # as if the cell were edited
    assert child(dialog, QLabel, "actionError").text() == "A row has a value but no name."
    assert not save_button(dialog).isEnabled()


def test_editing_loads_every_value_and_saves_the_changes(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    created = service.create_schedule(
        {
            "name": "login report",
            "expr": "*/15 8-18 * * mon-fri",
            "tz": "America/New_York",
            "action": {
                "kind": "command",
                "argv": ["report", "--endpoint", "login page"],
                "cwd": "/srv",
                "env": {"LANG": "C"},
                "secret_env": {"TOKEN": "API_TOKEN", "OLD": "REMOVED_SECRET"},
                "stdin": "yes\n",
            },
            "policies": {"catch_up": "skip", "overlap": "replace", "jitter": 20, "retries": 1},
        }
    )
    dialog = open_editor(schedule_id=created["id"])
    assert dialog.windowTitle() == "Edit “login report”"
    assert child(dialog, QLineEdit, "name").text() == "login report"
    assert child(dialog, QPlainTextEdit, "cron").toPlainText() == "*/15 8-18 * * mon-fri"
    assert child(dialog, QComboBox, "zone").currentText() == "America/New_York"
    assert child(dialog, QLineEdit, "command").text() == "report --endpoint 'login page'"
    assert child(dialog, QLineEdit, "cwd").text() == "/srv"
    assert child(dialog, PairsTable, "env").pairs() == [("LANG", "C")]
    secret_env: PairsTable = child(dialog, PairsTable, "secretEnv")
    assert secret_env.pairs() == [("TOKEN", "API_TOKEN"), ("OLD", "REMOVED_SECRET")]
    gone = secret_env.table.cellWidget(1, 1)
    assert isinstance(gone, QComboBox)
    assert gone.currentText() == "REMOVED_SECRET (not in the keychain)"
    assert child(dialog, QPlainTextEdit, "stdin").toPlainText() == "yes\n"
    assert child(dialog, QComboBox, "catchUp").currentData() == "skip"
    assert child(dialog, QComboBox, "overlap").currentData() == "replace"
    assert child(dialog, QWidget, "jitter").value() == 20
    assert child(dialog, QWidget, "retries").value() == 1
    assert save_button(dialog).isEnabled()

    type_into(qtbot, child(dialog, QPlainTextEdit, "cron"), "0 9 * * *")
    secret_env.table.removeRow(1)
    secret_env.changed.emit()
    with qtbot.waitSignal(dialog.saved, timeout=1000) as saved:
        save_button(dialog).click()
    assert saved.args == [created["id"]]
    stored = service.get_schedule({"id": created["id"]})
    assert stored["expr"] == "0 9 * * *"
    assert stored["action"]["secret_env"] == {"TOKEN": "API_TOKEN"}
    assert stored["action"]["argv"] == ["report", "--endpoint", "login page"]
    assert stored["policies"]["overlap"] == "replace"
    assert len(service.list_schedules()) == 1


def test_a_refusal_from_the_service_is_shown_at_its_field_and_the_dialog_stays_open(
    qtbot: QtBot, open_editor: Open, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise ParamError("name", "is already used by another schedule")

    monkeypatch.setattr(service, "create_schedule", refuse)
    dialog = open_editor()
    dialog.show()
    fill_valid(qtbot, dialog)
    with qtbot.assertNotEmitted(dialog.saved):
        save_button(dialog).click()
    assert dialog.isVisible()
    name_error = child(dialog, QLabel, "nameError")
    assert name_error.text() == "is already used by another schedule"
    assert not name_error.isHidden()
    assert not save_button(dialog).isEnabled()  # saving the same again would fail the same way
    qtbot.keyClicks(child(dialog, QLineEdit, "name"), " 2")
    assert name_error.isHidden()
    assert save_button(dialog).isEnabled()


def test_a_schedule_deleted_meanwhile_is_reported_and_the_dialog_stays_open(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    created = service.create_schedule(
        {"name": "gone", "expr": "0 9 * * *", "action": {"argv": ["true"]}}
    )
    dialog = open_editor(schedule_id=created["id"])
    dialog.show()
    service.delete_schedule({"id": created["id"]})
    save_button(dialog).click()
    assert dialog.isVisible()
    assert child(dialog, QLabel, "status").text().startswith("Could not save: ")


# -- Chinese -----------------------------------------------------------------------------------

USER_DATA = {
    "report",
    "report 'open",
    "TOKEN",
    "REMOVED_SECRET",
    "API_TOKEN",
    "SLACK_HOOK",
    "orphan",
    "ftp://x",
    "Nowhere/Atlantis",
    "30 2 * * *",
}
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def visible_texts(root: QWidget) -> set[str]:
    """Every text a person can see or hear: labels, titles, placeholders, tooltips, items."""
    texts: set[str] = set()
    for widget in [root, *root.findChildren(QWidget)]:
        texts |= {widget.toolTip(), widget.accessibleName()}
        if isinstance(widget, (QLabel, QAbstractButton, QLineEdit)):
            texts.add(widget.text())
        if isinstance(widget, (QLineEdit, QPlainTextEdit)):
            texts.add(widget.placeholderText())
        if isinstance(widget, QGroupBox):
            texts.add(widget.title())
        if isinstance(widget, QComboBox):
            texts |= {widget.itemText(i) for i in range(widget.count())}
            texts.add(widget.placeholderText())
        if isinstance(widget, QTableWidget):
            for column in range(widget.columnCount()):
                header = widget.horizontalHeaderItem(column)
                texts.add(header.text() if header else "")
                for row in range(widget.rowCount()):
                    item = widget.item(row, column)
                    texts |= {item.text(), item.toolTip()} if item else set()
        if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            texts |= {widget.specialValueText(), widget.suffix(), widget.prefix()}
    return {text.strip() for text in texts if text.strip()}


def test_in_chinese_every_text_of_the_dialog_is_translated(
    qtbot: QtBot, open_editor: Open, service: Service
) -> None:
    i18n.set_language("zh")
    i18n.reset_missing()
    created = service.create_schedule(
        {
            "name": "登录报告",
            "expr": "30 2 * * *",
            "tz": "America/New_York",
            "action": {"argv": ["report"], "secret_env": {"TOKEN": "REMOVED_SECRET"}},
            "policies": {"catch_up_within": 3600},
        }
    )
    dialog = open_editor(schedule_id=created["id"])
    seen = visible_texts(dialog)
    for scenario in Scenario:
        simulate(dialog, scenario)
        seen |= visible_texts(dialog)
    for name in ("catchUp", "overlap"):
        combo: QComboBox = child(dialog, QComboBox, name)
        for index in range(combo.count()):
            combo.setCurrentIndex(index)
            seen |= visible_texts(dialog)
    type_into(qtbot, child(dialog, QLineEdit, "name"), "")
    type_into(qtbot, child(dialog, QLineEdit, "command"), "report 'open")
    child(dialog, PairsTable, "env").add_row("", "orphan")
    seen |= visible_texts(dialog)
    child(dialog, QAbstractButton, "kindHttp").setChecked(True)
    type_into(qtbot, child(dialog, QLineEdit, "httpUrl"), "ftp://x")
    line = child(dialog, QComboBox, "zone").lineEdit()
    line.clear()
    qtbot.keyClicks(line, "Nowhere/Atlantis")
    seen |= visible_texts(dialog)

    assert i18n.missing() == set()
    assert "不运行：被补跑策略跳过；跳过了 2 次更早的运行。" in seen  # 1 h window, 3 days asleep
    assert "America/New_York" in seen
    # What is left in Latin letters is data: zone names, times, expressions, the user's entries.
    data = re.compile(r"^(.*\d{2}:\d{2}.*|https://example\.org/\w+|[+−…]|\d+|URL|[A-Z]+)$")
    untranslated = {
        text
        for text in seen - set(available_timezones()) - USER_DATA
        if re.search("[A-Za-z]", text) and not CJK.search(text) and not data.match(text)
    }
    assert untranslated == set()
