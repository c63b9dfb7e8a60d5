"""The sleep panel's dates carry their year when it is not this one (the editor's "now"): a
yearly job on 1 January, seen in March, happens next year."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPlainTextEdit
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.ui.editor.dialog import EditorDialog
from tests.unit.ui.editor import test_editor_conditions as conditions_tests

NOW, child = conditions_tests.NOW, conditions_tests.child  # 2024-03-05 12:00 UTC, Riga's clock
service, english, os_zone = (
    conditions_tests.service,
    conditions_tests.english,
    conditions_tests.os_zone,
)


def panel(qtbot: QtBot, service: Service, expr: str) -> tuple[str, str]:
    dialog = EditorDialog(service, now=lambda: NOW)
    dialog.sleep.wake_capability = lambda: None
    qtbot.addWidget(dialog)
    child(dialog, QPlainTextEdit, "cron").setPlainText(expr)
    scenario = child(dialog, QComboBox, "simulateScenario")
    scenario.setCurrentIndex(scenario.findData("just_after"))
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    texts = [child(dialog, QLabel, name).text() for name in ("simulateResult", "simulateDetails")]
    return " ".join(texts), child(dialog, QLabel, "wakeLine").text()


def test_dates_in_another_year_carry_it(qtbot: QtBot, service: Service) -> None:
    story, wake = panel(qtbot, service, "0 9 1 1 *")  # next: 1 January 2025
    assert "2025-01-01" in story, story
    assert "Last run Mon 01-01 09:00." in story, story  # this year: no year
    assert "for the run due Wed 2025-01-01 09:00." in wake, wake


def test_dates_of_this_year_do_not(qtbot: QtBot, service: Service) -> None:
    story, wake = panel(qtbot, service, "0 9 * * *")
    assert "2024" not in story and "2024" not in wake, (story, wake)
