"""The Settings dialog's machine heartbeat: its fields are saved, and what the dialog does not
show (alerts, the catch-up burst) is saved as it was rather than reset to the defaults."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.settings import AppSettings
from domi_desktop.ports import Autostart
from tests.unit.ui.test_settings import OK, autostart, dialog_for, press  # noqa: F401 (a fixture)


def test_the_heartbeat_is_saved_and_unshown_settings_are_kept(
    qtbot: QtBot,
    autostart: Autostart,  # noqa: F811
) -> None:
    settings = AppSettings(catch_up_burst=7, alert_auto_pause_after=3, heartbeat_hours=72)
    dialog = dialog_for(qtbot, autostart, settings)
    assert dialog.findChild(QSpinBox, "heartbeatHours").value() == 72
    dialog.findChild(QLineEdit, "heartbeatKey").setText(" hc-key ")
    dialog.findChild(QLineEdit, "heartbeatApi").setText("https://hc.example.org")
    dialog.findChild(QSpinBox, "heartbeatHours").setValue(24)
    saved = press(qtbot, dialog, OK)
    assert saved == AppSettings(
        catch_up_burst=7,
        alert_auto_pause_after=3,
        healthchecks_key="hc-key",
        healthchecks_api="https://hc.example.org",
        heartbeat_hours=24,
    )
