"""The sleep panel's window scenarios, through the editor: with "Only between 22:00-06:00" the
laptop sleeps through part of the next run's window (it runs at the first awake minute inside it)
or all of it (skipped at the window's end with the sleep as its reason, or run then when the
window's end is set to run), in English and Chinese; without hours the scenarios are not offered."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.sleep_window import WindowCase
from tests.unit.ui.editor.test_editor_conditions import child, editor, english, os_zone, service

__all__ = ["english", "os_zone", "service"]  # the fixtures, shared with the conditions' tests


def told(dialog: EditorDialog, case: WindowCase) -> tuple[str, str]:
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    index = combo.findData(f"window_{case.name}")
    assert index >= 0, f"{case} is not offered"
    combo.setCurrentIndex(index)
    return (
        str(child(dialog, QLabel, "simulateResult").text()),
        str(child(dialog, QLabel, "simulateDetails").text()),
    )


def offered(dialog: EditorDialog) -> set[str]:
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    return {str(combo.itemData(index)) for index in range(combo.count())}


def test_sleeping_through_part_of_the_window_runs_at_the_first_awake_minute(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)  # 09:00 daily in Riga; now Tue 03-05 14:00 there
    assert not {f"window_{case.name}" for case in WindowCase} & offered(dialog)
    child(dialog, QLineEdit, "window").setText("22:00-06:00")
    result, details = told(dialog, WindowCase.part)
    assert result == "Runs once at Thu 03-07 00:00, inside the window."
    assert "opens at Wed 03-06 22:00 and closes at Thu 03-07 06:00" in details
    assert "sleeps from Wed 03-06 21:40 to Thu 03-07 00:00" in details
    assert "Thu 03-07 00:00: the first awake minute inside the window: runs." in details


def test_sleeping_through_the_whole_window_skips_it_saying_the_sleep(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "window").setText("22:00-06:00")
    result, details = told(dialog, WindowCase.whole)
    assert result == "Does not run: skipped at the window's end, “asleep 22:00-06:00”."
    assert (
        "Thu 03-07 07:10: the window closed at Thu 03-07 06:00 unused: recorded skipped, "
        "“asleep 22:00-06:00”." in details
    )
    end: QComboBox = child(dialog, QComboBox, "atWindowEnd")
    end.setCurrentIndex(end.findData("run"))
    result, details = told(dialog, WindowCase.whole)
    assert result == "Runs once at Thu 03-07 07:10, after the window."
    assert "recorded “ran at the window's end: asleep 22:00-06:00”" in details
    child(dialog, QLineEdit, "window").setText("")
    assert not {f"window_{case.name}" for case in WindowCase} & offered(dialog)


def test_the_window_scenarios_speak_chinese(qtbot: QtBot, service: Service) -> None:
    i18n.set_language("zh")
    i18n.reset_missing()
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "window").setText("22:00-06:00")
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    assert combo.itemText(combo.findData("window_whole")) == "休眠了整个时段"
    result, details = told(dialog, WindowCase.whole)
    assert result == "不运行：在时段结束时跳过，“asleep 22:00-06:00”。"
    assert "记录为已跳过" in details
    assert i18n.missing() == set()
