"""The editor's "Wake the computer to run this": the live line says when the machine would be
woken next for the schedule as edited, or why this machine cannot be woken; a save keeps it."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
)
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.waking import WakeWay
from tests.unit.ui.editor import test_editor_conditions as conditions_tests

# The conditions' tests' fixtures: a service on a real store at NOW, English, the OS in Riga.
NOW, child = conditions_tests.NOW, conditions_tests.child
service, english, os_zone = (
    conditions_tests.service,
    conditions_tests.english,
    conditions_tests.os_zone,
)


def editor(
    qtbot: QtBot, service: Service, why_not: str | None = None, **options: Any
) -> EditorDialog:
    dialog = EditorDialog(service, now=lambda: NOW, **options)
    dialog.sleep.wake_capability = lambda: why_not
    via = None if why_not is not None else "a systemd user timer (WakeSystem=yes)"
    dialog.policies.wake_way = lambda: WakeWay(via, why_not)
    qtbot.addWidget(dialog)
    child(dialog, QPlainTextEdit, "cron").setPlainText("0 3 * * *")
    return dialog


def line(dialog: EditorDialog) -> QLabel:
    return child(dialog, QLabel, "wakeLine")  # type: ignore[no-any-return]


def test_the_line_says_when_the_computer_would_be_woken_once_the_box_is_ticked(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    assert line(dialog).isHidden()
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    assert not line(dialog).isHidden()
    # 03:00 in Riga (UTC+2) is the next due; the computer wakes 30 s before.
    assert (
        line(dialog).text()
        == "Wakes the computer at Wed 03-06 02:59:30 for the run due Wed 03-06 03:00."
    )
    child(dialog, QPlainTextEdit, "cron").setPlainText("30 4 * * *")
    qtbot.waitUntil(lambda: "for the run due Wed 03-06 04:30." in line(dialog).text())
    child(dialog, QCheckBox, "wakeToRun").setChecked(False)
    assert line(dialog).isHidden()


def test_an_ac_only_job_says_it_is_not_woken_for_on_battery(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    child(dialog, QCheckBox, "onAcPower").setChecked(True)
    assert line(dialog).text().endswith(" Not on battery: the run waits for the charger.")


def test_a_machine_that_cannot_be_woken_says_why_and_what_would_allow_it(
    qtbot: QtBot, service: Service
) -> None:
    why = "the systemd user manager is version 252: its timers wake the machine from systemd 254 on"
    dialog = editor(qtbot, service, why_not=why)
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    assert line(dialog).text() == f"This computer cannot be woken: {why}."


def test_a_save_keeps_the_wake_and_the_editor_shows_it_again(
    qtbot: QtBot, service: Service
) -> None:
    dialog = editor(qtbot, service)
    child(dialog, QLineEdit, "name").setText("Backup")
    child(dialog, QLineEdit, "command").setText("backup --all")
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    with qtbot.waitSignal(dialog.saved) as saved:
        child(dialog, QAbstractButton, "save").click()
    stored = service.get_schedule({"id": saved.args[0]})
    assert parse_policies(stored["policies"]).wake_to_run
    reopened = editor(qtbot, service, schedule_id=saved.args[0])
    assert child(reopened, QCheckBox, "wakeToRun").isChecked()
    assert not line(reopened).isHidden()


def test_chinese(qtbot: QtBot, service: Service) -> None:
    i18n.set_language("zh")
    dialog = editor(qtbot, service, why_not="x")
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    assert child(dialog, QCheckBox, "wakeToRun").text() == "唤醒电脑来运行它"
    assert line(dialog).text() == "无法唤醒这台电脑：x。"


def beside(dialog: EditorDialog) -> QLabel:
    return child(dialog, QLabel, "wakeHow")  # type: ignore[no-any-return]


def test_beside_the_box_it_says_how_this_machine_is_woken(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    box = child(dialog, QCheckBox, "wakeToRun")
    assert beside(dialog).isHidden()
    box.setChecked(True)
    assert not beside(dialog).isHidden()
    assert beside(dialog).text() == "Woken by a systemd user timer (WakeSystem=yes)."
    # Beside it, not under: the same row of the form.
    assert abs(beside(dialog).mapTo(dialog, beside(dialog).rect().center()).y()
               - box.mapTo(dialog, box.rect().center()).y()) < box.height()  # fmt: skip
    i18n.set_language("zh")
    try:
        assert beside(dialog).text() == "通过systemd 用户定时器（WakeSystem=yes）唤醒。"
    finally:
        i18n.set_language("en")


def test_beside_the_box_it_says_why_this_machine_cannot_be_woken(
    qtbot: QtBot, service: Service
) -> None:
    why = "timerfd: CLOCK_REALTIME_ALARM needs CAP_WAKE_ALARM"
    dialog = editor(qtbot, service, why_not=why)
    child(dialog, QCheckBox, "wakeToRun").setChecked(True)
    assert beside(dialog).text() == f"This computer cannot be woken: {why}."
