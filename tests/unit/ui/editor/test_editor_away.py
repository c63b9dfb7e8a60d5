"""The editor's "Only when I'm away from the computer for ... min" and "Only between" rows: said in
the sentence, in Chinese too, and round-tripped through the service by a save."""

from __future__ import annotations

from datetime import time, timedelta

from PySide6.QtWidgets import QAbstractButton, QCheckBox, QComboBox, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.model import AtWindowEnd, OnReturn, Window
from domi_desktop.ui import i18n
from tests.unit.ui.editor.test_editor_conditions import (
    child,
    editor,
    english,
    os_zone,
    sentence,
    service,
)

__all__ = ["english", "os_zone", "service"]  # the fixtures, shared with the conditions' tests


def test_away_and_a_window_are_said_and_saved(qtbot: QtBot, service: Service) -> None:
    dialog = editor(qtbot, service)
    minutes: QSpinBox = child(dialog, QSpinBox, "awayMinutes")
    assert not minutes.isEnabled()
    child(dialog, QCheckBox, "whenAway").setChecked(True)
    assert minutes.isEnabled()
    minutes.setValue(15)
    assert sentence(dialog) == "Waits for you to step away for 15 minutes."
    back: QComboBox = child(dialog, QComboBox, "onReturn")
    back.setCurrentIndex(back.findData("stop"))
    child(dialog, QLineEdit, "window").setText("22:00-06:00")
    end: QComboBox = child(dialog, QComboBox, "atWindowEnd")
    end.setCurrentIndex(end.findData("run"))
    assert "the window 22:00-06:00" in sentence(dialog)
    child(dialog, QLineEdit, "name").setText("Index")
    child(dialog, QLineEdit, "command").setText("index --all")
    with qtbot.waitSignal(dialog.saved) as saved:
        child(dialog, QAbstractButton, "save").click()
    stored = service.get_schedule({"id": saved.args[0]})
    from domi_desktop.frontdoor.wire import parse_policies

    conditions = parse_policies(stored["policies"]).conditions
    assert conditions.away == timedelta(minutes=15)
    assert conditions.on_return is OnReturn.stop
    assert conditions.window == Window(time(22), time(6))
    assert conditions.at_window_end is AtWindowEnd.run
    again = editor(qtbot, service, schedule_id=saved.args[0])
    assert child(again, QCheckBox, "whenAway").isChecked()
    assert child(again, QLineEdit, "window").text() == "22:00-06:00"


def test_the_rows_speak_chinese(qtbot: QtBot, service: Service) -> None:
    i18n.set_language("zh")
    dialog = editor(qtbot, service)
    assert child(dialog, QCheckBox, "whenAway").text() == "仅在我离开电脑至少"
    child(dialog, QCheckBox, "whenAway").setChecked(True)
    assert "你离开电脑" in sentence(dialog)
    assert not i18n.missing()
