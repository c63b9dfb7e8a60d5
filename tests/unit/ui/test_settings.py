from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox, QLabel
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.settings import AppSettings
from domi_desktop.platform.autostart import autostart_for_platform
from domi_desktop.ports import Autostart
from domi_desktop.ui import i18n
from domi_desktop.ui.settings import SettingsDialog

OK = QDialogButtonBox.StandardButton.Ok
APPLY = QDialogButtonBox.StandardButton.Apply


@pytest.fixture
def autostart(tmp_path: Path) -> Autostart:
    return autostart_for_platform("linux", home=tmp_path, env={})


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    return tmp_path / ".config" / "autostart" / "domi-desktop.desktop"


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.set_language("zh")
    i18n.reset_missing()
    yield
    i18n.set_language("en")


DEFAULTS = AppSettings()


def dialog_for(
    qtbot: QtBot, autostart: Autostart, settings: AppSettings = DEFAULTS
) -> SettingsDialog:
    dialog = SettingsDialog(settings, autostart=autostart)
    qtbot.addWidget(dialog)
    return dialog


def press(qtbot: QtBot, dialog: SettingsDialog, button: QDialogButtonBox.StandardButton) -> object:
    with qtbot.waitSignal(dialog.changed, timeout=1000) as emitted:
        dialog.buttons.button(button).click()
    return emitted.args[0]


def test_start_at_login_writes_the_autostart_file_and_unchecking_removes_it(
    qtbot: QtBot, autostart: Autostart, entry: Path
) -> None:
    dialog = dialog_for(qtbot, autostart)
    assert not dialog.start_at_login.isChecked()
    assert str(entry) in dialog.findChild(QLabel, "loginEntry").text()

    dialog.start_at_login.setChecked(True)
    emitted = press(qtbot, dialog, APPLY)

    assert entry.is_file()
    assert "-m domi_desktop" in entry.read_text(encoding="utf-8")
    assert emitted == AppSettings(start_at_login=True)

    again = dialog_for(qtbot, autostart)
    assert again.start_at_login.isChecked()
    again.start_at_login.setChecked(False)
    assert press(qtbot, again, OK) == AppSettings(start_at_login=False)
    assert not entry.exists()
    assert again.result() == SettingsDialog.DialogCode.Accepted


def test_the_checkbox_shows_the_entry_on_disk_rather_than_the_saved_wish(
    qtbot: QtBot, autostart: Autostart, entry: Path
) -> None:
    dialog = dialog_for(qtbot, autostart, AppSettings(start_at_login=True))
    assert not dialog.start_at_login.isChecked()
    assert press(qtbot, dialog, OK) == AppSettings(start_at_login=False)
    assert not entry.exists()


def test_ok_emits_every_field_of_the_new_settings(qtbot: QtBot, autostart: Autostart) -> None:
    dialog = dialog_for(qtbot, autostart, AppSettings(default_zone="Asia/Shanghai", language="zh"))
    assert dialog.default_zone.zone() == "Asia/Shanghai"
    assert dialog.language.currentText() == "简体中文"
    assert (dialog.notify_late.isChecked(), dialog.notify_successes.isChecked()) == (True, False)

    dialog.notify_late.setChecked(False)
    dialog.notify_failures.setChecked(False)
    dialog.notify_successes.setChecked(True)
    dialog.default_zone.setEditText("europe/berlin")
    dialog.language.setCurrentIndex(dialog.language.findData("en"))
    emitted = press(qtbot, dialog, OK)

    assert emitted == AppSettings(
        start_at_login=False,
        notify_late=False,
        notify_failures=False,
        notify_successes=True,
        default_zone="Europe/Berlin",
        language="en",
    )
    assert dialog.result() == SettingsDialog.DialogCode.Accepted


def test_the_zone_picker_offers_local_first_and_refuses_an_unknown_zone(
    qtbot: QtBot, autostart: Autostart
) -> None:
    dialog = dialog_for(qtbot, autostart)
    assert dialog.default_zone.itemData(0) == "local"
    assert dialog.default_zone.zone() == "local"
    completer = dialog.default_zone.completer()
    completer.setCompletionPrefix("shang")
    assert completer.currentCompletion() == "Asia/Shanghai"

    dialog.default_zone.setEditText("Mars/Olympus_Mons")
    assert not dialog.zone_error.isHidden()
    assert not dialog.buttons.button(OK).isEnabled()
    assert not dialog.buttons.button(APPLY).isEnabled()

    dialog.default_zone.setEditText("UTC")
    assert dialog.zone_error.isHidden()
    assert dialog.buttons.button(OK).isEnabled()


def test_a_login_entry_that_cannot_be_changed_is_shown_and_the_dialog_stays_open(
    qtbot: QtBot, autostart: Autostart, entry: Path
) -> None:
    mine = "[Desktop Entry]\nExec=my-own-launcher --tray\n"  # written by the user, not by us
    entry.parent.mkdir(parents=True)
    entry.write_text(mine, encoding="utf-8")
    dialog = dialog_for(qtbot, autostart)
    dialog.show()
    assert dialog.start_at_login.isChecked()
    dialog.start_at_login.setChecked(False)

    emitted = press(qtbot, dialog, OK)

    assert dialog.isVisible()
    assert dialog.autostart_error.isVisible()
    assert dialog.autostart_error.text() == (
        f"Problem with the login entry: {entry} was not written by domi-desktop, so it was left "
        "alone; remove it yourself if it should go"
    )
    assert dialog.start_at_login.isChecked()
    assert emitted == AppSettings(start_at_login=True)
    assert entry.read_text(encoding="utf-8") == mine


def test_every_text_of_the_dialog_is_translated_to_chinese(
    qtbot: QtBot, autostart: Autostart, chinese: None
) -> None:
    dialog = dialog_for(qtbot, autostart)
    assert i18n.missing() == set()
    assert dialog.windowTitle() == "设置 — domi-desktop"
    assert dialog.start_at_login.text() == "登录时启动 domi-desktop"
    assert dialog.default_zone.itemText(0).startswith("本地")
