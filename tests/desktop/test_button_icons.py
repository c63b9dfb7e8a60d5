"""Without an icon theme that has them, a dialog's buttons carry no icon: never Qt's own
fallback discs (drawn on X11, where Qt's generic theme gives buttons icons; under Xvfb there is
no icon theme)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from domi_desktop.ui.button_icons import THEMED, ThemeIconsOnly, theme_icons_only

pytestmark = [pytest.mark.gui, pytest.mark.linux_only]


@pytest.fixture
def style_kept(qapp: QApplication) -> Iterator[None]:
    name = qapp.style().name()
    yield
    qapp.setStyle(name)


def buttons(qtbot: QtBot) -> QDialogButtonBox:
    box = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok
        | QDialogButtonBox.StandardButton.Cancel
        | QDialogButtonBox.StandardButton.Apply
    )
    qtbot.addWidget(box)
    return box


def test_no_theme_no_icons_on_a_dialog_s_buttons(
    qapp: QApplication, qtbot: QtBot, style_kept: None
) -> None:
    if qapp.platformName() != "xcb":
        pytest.skip("Qt's discs are X11's generic theme's")
    assert not all(QIcon.hasThemeIcon(name) for name in THEMED)  # no icon theme here
    before = buttons(qtbot)
    assert not before.buttons()[0].icon().isNull()  # Qt's own disc
    assert theme_icons_only(qapp)
    assert isinstance(qapp.style(), ThemeIconsOnly)
    after = buttons(qtbot)
    assert all(button.icon().isNull() for button in after.buttons())
