"""The language chosen in Settings reaches every open window at once, both ways (the Schedules
window, History, the Timeline, an editor, the tray's menu); Apply leaves OK usable; the columns
are fitted to the new words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from domi_desktop.ui import i18n
from domi_desktop.ui.main_window import COLUMN_WIDTHS
from domi_desktop.ui.schedule_model import Column
from domi_desktop.ui.settings import SettingsDialog
from domi_desktop.ui.tray import TrayApp
from tests.unit.app.test_main_window import tray

__all__ = ["tray"]  # the fixture, shared with the Schedules window's tests


@pytest.fixture(autouse=True)
def english_after(tray: TrayApp) -> Iterator[None]:
    yield
    # The dialogs opened here go with the test: a later language switch must not reach them.
    for key in ("editor", "settings"):
        window = tray._windows.get(key)
        if window is not None:
            window.close()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    i18n.set_language("en")


def texts(app: TrayApp) -> dict[str, str]:
    win = app.main_window
    history = app._windows["history"]
    timeline = app._windows["timeline"]
    editor = app._windows["editor"]
    return {
        "schedules": win.acts["new"].text(),
        "menu": win.menuBar().actions()[0].text(),
        "header": str(win.model.headerData(Column.next_run, Qt.Orientation.Horizontal)),
        "history": history.windowTitle(),
        "timeline": timeline.windowTitle(),
        "editor": editor.windowTitle(),
        "tray": " | ".join(action.text() for action in app.menu.actions() if action.text()),
    }


def choose(dialog: SettingsDialog, language: str) -> None:
    dialog.language.setCurrentIndex(dialog.language.findData(language))


def test_apply_switches_every_open_window_both_ways_and_ok_stays_usable(
    tray: TrayApp, qapp: QApplication
) -> None:
    tray.show_main_window()
    tray.open_history(None)
    tray.open_timeline()
    tray.open_editor(None)
    tray.open_settings()
    dialog = tray._windows["settings"]
    assert isinstance(dialog, SettingsDialog)
    english = texts(tray)
    assert english["schedules"] == "New…" and english["header"] == "Next run"

    choose(dialog, "zh")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Apply).click()
    chinese = texts(tray)
    assert chinese == {
        "schedules": "新建…",
        "menu": "文件(&F)",
        "header": "下次运行",
        "history": "运行历史 — domi-desktop",
        "timeline": "时间线 — domi-desktop",
        "editor": "新建计划",
        "tray": chinese["tray"],
    }
    assert "New schedule…" in english["tray"] and "新建计划…" in chinese["tray"]
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled() and ok.isVisible() and ok.text()
    assert dialog.rect().contains(ok.geometry().translated(dialog.buttons.pos()))

    choose(dialog, "en")
    ok.click()
    assert texts(tray) == english
    assert not dialog.isVisible()


def test_the_columns_fit_their_headers_after_a_switch(tray: TrayApp) -> None:
    win = tray.main_window
    header = win.table.horizontalHeader()
    metrics = header.fontMetrics()
    i18n.set_language("zh")
    i18n.set_language("en")
    for column in COLUMN_WIDTHS:
        title = str(win.model.headerData(column, Qt.Orientation.Horizontal))
        assert header.sectionSize(column) >= metrics.horizontalAdvance(title), title
