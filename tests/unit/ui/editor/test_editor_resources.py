"""The editor's Conditions box: a disk, a network's name, a path and the session's
moments, said in one sentence with the schedule's time, saved and read back through the service;
a screenshot of the box for the README."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
)
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.model import Conditions, SessionTriggers
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.sleep import Scenario
from tests.unit.ui.editor import test_editor_conditions as conditions_tests
from tests.unit.ui.editor.test_editor_conditions import child, editor, on_battery, sentence

# The Conditions box's own tests' fixtures: a service on a real store, English, a zone.
service = conditions_tests.service
english = conditions_tests.english
os_zone = conditions_tests.os_zone

SHOTS = os.environ.get("DOMI_SCREENSHOTS")
"""A folder to keep the box's picture in (the README's), when set."""


def backup_daily(dialog: object, qtbot: QtBot) -> None:
    cron: QPlainTextEdit = child(dialog, QPlainTextEdit, "cron")
    cron.setPlainText("@daily")
    child(dialog, QLineEdit, "name").setText("Backup")
    child(dialog, QLineEdit, "command").setText("backup-to $DOMI_VOLUME_PATH")
    child(dialog, QLineEdit, "volume").setText("Backup")
    child(dialog, QSpinBox, "waitHours").setValue(72)


def test_one_sentence_says_when_it_runs_and_what_it_waits_for(
    qtbot: QtBot, service: Service, tmp_path: Path
) -> None:
    dialog = editor(qtbot, service)
    backup_daily(dialog, qtbot)
    qtbot.waitUntil(lambda: sentence(dialog).startswith("At 00:00"))
    assert sentence(dialog) == (
        "At 00:00, every day, when the disk Backup is plugged in; waits at most 3 days, then "
        "runs anyway."
    )
    assert not child(dialog, QSpinBox, "minInterval").isEnabled()
    child(dialog, QCheckBox, "atUnlock").setChecked(True)
    child(dialog, QSpinBox, "minInterval").setValue(60)
    assert sentence(dialog).endswith(" Also at unlock, at most once every 1 hour.")
    if SHOTS:
        dialog.show()
        qtbot.waitExposed(dialog)
        dialog.conditions.grab().save(str(Path(SHOTS) / "editor-conditions-disk.png"))


def test_the_disk_and_the_moments_are_saved_and_read_back(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    backup_daily(dialog, qtbot)
    child(dialog, QLineEdit, "pathExists").setText("/mnt/nas/ready")
    child(dialog, QCheckBox, "atLogin").setChecked(True)
    child(dialog, QCheckBox, "onlyMoments").setChecked(True)
    with qtbot.waitSignal(dialog.saved) as saved:
        child(dialog, QAbstractButton, "save").click()
    policies = parse_policies(service.get_schedule({"id": saved.args[0]})["policies"])
    assert policies.conditions == Conditions(
        volume="Backup", path_exists="/mnt/nas/ready", wait_at_most=timedelta(hours=72)
    )
    assert policies.session == SessionTriggers(at_login=True, only=True)

    again = editor(qtbot, service, schedule_id=saved.args[0])
    assert child(again, QLineEdit, "volume").text() == "Backup"
    assert child(again, QCheckBox, "onlyMoments").isChecked()
    assert not again.has_edits()
    child(again, QLineEdit, "volume").setText("")
    child(again, QCheckBox, "atLogin").setChecked(False)
    with qtbot.waitSignal(again.saved):
        child(again, QAbstractButton, "save").click()
    cleared = parse_policies(service.get_schedule({"id": saved.args[0]})["policies"])
    assert cleared.conditions.volume is None and cleared.session == SessionTriggers()


def test_in_chinese_too(qtbot: QtBot, service: Service) -> None:
    i18n.set_language("zh")
    dialog = editor(qtbot, service)
    backup_daily(dialog, qtbot)
    qtbot.waitUntil(lambda: sentence(dialog).startswith("每天"))
    assert sentence(dialog) == "每天 00:00，插入磁盘 Backup 时；最多等待 3 天，之后照常运行。"


def test_the_sleep_panel_says_a_disk_is_waited_for(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "command").setText("backup")
    child(dialog, QLineEdit, "volume").setText("Backup")
    result, details = on_battery(dialog)
    assert result == "Does not run yet: waiting for the disk Backup."
    assert "It starts as soon as all it waits for is there." in details


def comes_late(dialog: EditorDialog) -> tuple[str, str]:
    combo: QComboBox = child(dialog, QComboBox, "simulateScenario")
    combo.setCurrentIndex(combo.findData(Scenario.resources_late.name))
    return (
        str(child(dialog, QLabel, "simulateResult").text()),
        str(child(dialog, QLabel, "simulateDetails").text()),
    )


def test_the_sleep_panel_plays_the_disk_coming_an_hour_late(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "command").setText("backup")
    assert comes_late(dialog)[0] == "Runs once, on time.", "waiting for nothing: on time"
    child(dialog, QLineEdit, "volume").setText("Backup")
    result, details = comes_late(dialog)
    assert result == "Waits for the disk Backup until Wed 03-06 10:00, then runs once."
    assert "Wed 03-06 09:00:30: the run due Wed 03-06 09:00 waits: waiting for the disk" in details
    assert "Wed 03-06 10:00: the disk Backup is there: runs once for Wed 03-06 09:00, late." in (
        details
    )
    child(dialog, QLineEdit, "networkName").setText("Office")
    assert comes_late(dialog)[0] == (
        "Waits for the disk Backup and the Office network until Wed 03-06 10:00, then runs once."
    )


def test_a_wait_shorter_than_the_hour_ends_first(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "command").setText("backup")
    child(dialog, QLineEdit, "pathExists").setText("/mnt/nas/ready")
    child(dialog, QSpinBox, "waitMinutes").setValue(30)
    result, details = comes_late(dialog)
    assert result.startswith("Waits for /mnt/nas/ready until Wed 03-06 09:30: ")
    assert "Wed 03-06 09:30: still not there: " in details
    assert "runs once for" not in details
