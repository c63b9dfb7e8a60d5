"""The dark palette and the colours that follow it; the language switched while windows are open;
Chinese catalogs written with full-width punctuation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QComboBox, QGroupBox, QPlainTextEdit
from pytestqt.qtbot import QtBot

# Every module that registers a catalog, so the check below sees all of them.
import domi_desktop.ui.editor.dialog
import domi_desktop.ui.history.window
import domi_desktop.ui.settings  # noqa: F401
from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.settings import AppSettings
from domi_desktop.model import CommandAction, RunStatus
from domi_desktop.store import Store
from domi_desktop.ui import i18n, palette
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.widgets import error_label
from domi_desktop.ui.history.model import RunsModel
from domi_desktop.ui.settings import SettingsDialog
from tests.support.fakes import FakeClock

NOW = datetime(2024, 3, 5, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        yield opened


@pytest.fixture
def dark(qapp: QApplication) -> Iterator[None]:
    before = QPalette(qapp.palette())
    palette.apply_scheme(qapp, Qt.ColorScheme.Dark)
    yield
    palette.apply_scheme(qapp, Qt.ColorScheme.Light)
    qapp.setPalette(before)


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def switch(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """The system's scheme changes; Qt delivers the palette change to widgets as posted events."""
    palette.apply_scheme(app, scheme)
    app.processEvents()


class FakeAutostart:
    def describe(self) -> str:
        return "~/.config/autostart/domi-desktop.desktop"

    def is_enabled(self) -> bool:
        return False


def test_the_light_palette_uses_the_light_colours(qapp: QApplication) -> None:
    assert not palette.is_dark()
    assert palette.colors() is palette.LIGHT


def test_a_dark_system_scheme_installs_a_dark_palette_and_dark_colours(
    qtbot: QtBot, qapp: QApplication, store: Store, dark: None
) -> None:
    assert palette.is_dark()
    assert palette.colors() is palette.DARK
    assert QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
    schedule = store.create_schedule(
        "backup", "0 9 * * *", "local", CommandAction(argv=("x",)), now=NOW
    )
    run_id = store.record_manual_run(schedule.id, NOW)
    store.start_run(run_id, NOW)
    store.finish_run(run_id, status=RunStatus.failed, finished_at=NOW, exit_code=1)
    model = RunsModel(store)
    brush = model.index(0, 3).data(Qt.ItemDataRole.ForegroundRole)
    assert brush.color().name() == palette.DARK.error.name()


def test_error_labels_change_red_when_the_scheme_changes(qtbot: QtBot, qapp: QApplication) -> None:
    label = error_label("someError")
    qtbot.addWidget(label)
    assert palette.LIGHT.error.name() in label.styleSheet()
    switch(qapp, Qt.ColorScheme.Dark)
    try:
        assert palette.DARK.error.name() in label.styleSheet()
    finally:
        switch(qapp, Qt.ColorScheme.Light)
    assert palette.LIGHT.error.name() in label.styleSheet()
    assert not palette.is_dark()


def test_the_dst_mark_in_the_preview_follows_the_palette(
    qtbot: QtBot, qapp: QApplication, store: Store
) -> None:
    dialog = EditorDialog(Service(store, FakeClock(NOW)), secret_names=list, now=lambda: NOW)
    qtbot.addWidget(dialog)
    cron = dialog.findChild(QPlainTextEdit, "cron")
    assert cron is not None
    cron.setPlainText("30 2 * * *")
    zone = dialog.findChild(QComboBox, "zone")
    assert zone is not None
    zone.setCurrentIndex(zone.findText("America/New_York"))

    def dst_colour() -> str:
        item = dialog.preview.table.item(4, 0)
        assert item is not None and "DST" in item.text()
        return item.foreground().color().name()

    assert dst_colour() == palette.LIGHT.dst.name()
    switch(qapp, Qt.ColorScheme.Dark)
    try:
        assert dst_colour() == palette.DARK.dst.name()
    finally:
        switch(qapp, Qt.ColorScheme.Light)


def test_every_dark_colour_is_readable_on_the_dark_window() -> None:
    def luminance(rgb: tuple[float, float, float]) -> float:
        def channel(c: float) -> float:
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    window = palette.dark_palette().color(QPalette.ColorRole.Window)
    back = luminance((window.redF(), window.greenF(), window.blueF()))
    for colour in (palette.DARK.error, palette.DARK.dst, palette.DARK.late, palette.DARK.muted):
        front = luminance((colour.redF(), colour.greenF(), colour.blueF()))
        assert (front + 0.05) / (back + 0.05) >= 4.5, colour.name()


def test_an_open_settings_dialog_switches_language_with_the_app(qtbot: QtBot) -> None:
    dialog = SettingsDialog(AppSettings(), autostart=FakeAutostart())  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    i18n.set_language("zh")
    assert dialog.windowTitle() == "设置 — domi-desktop"
    assert {group.title() for group in dialog.findChildren(QGroupBox)} == {
        "启动",
        "通知",
        "新计划",
        "语言",
        "本机心跳（Healthchecks）",
    }
    i18n.set_language("en")
    assert dialog.windowTitle() == "Settings — domi-desktop"


def test_chinese_loads_qt_s_own_catalog_and_english_unloads_it(qapp: QApplication) -> None:
    i18n.set_language("zh")
    assert i18n.qt_catalog_loaded()
    assert QApplication.translate("QPlatformTheme", "Cancel") == "取消"
    i18n.set_language("en")
    assert not i18n.qt_catalog_loaded()
    assert QApplication.translate("QPlatformTheme", "Cancel") == "Cancel"


CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef“”"
ASCII_PUNCTUATION = re.compile(
    rf"(?<=[{CJK}}}])\s?[,:;?!()]|[,:;?!()]\s?(?=[{CJK}{{])|\((?=[^)]*[{CJK}])"
)
"""ASCII , : ; ? ! ( ) touching Chinese text or a {placeholder}, or a bracket around Chinese."""


def prose(text: str) -> str:
    """A translation without its code: a placeholder ({hours:g}), a menu mnemonic ("文件(&F)", the
    Chinese convention Qt's own catalog follows), a file-dialog filter ("(*.json)", Qt parses it)."""
    return re.sub(r"\{[^}]*\}|\(&\w\)|\(\*\.\w+\)", "{}", text)


def test_chinese_text_uses_full_width_punctuation() -> None:
    offenders = {}
    for key, text in i18n._catalogs["zh"].items():
        if ASCII_PUNCTUATION.search(prose(text)):
            offenders[key] = text
    assert offenders == {}


def test_the_punctuation_check_catches_ascii_marks() -> None:
    for bad in ("例如:登录", "本机 ({})", "{}:{}", "跳过;等待", "怎样?"):
        assert ASCII_PUNCTUATION.search(bad), bad
    for good in (
        "文件(&F)",
        "计划文件 (*.json)",
        "例如：python3 report.py --endpoint login",
        "URL 必须以 http:// 开头",
        "0 9 * * 1-5",
    ):
        assert not ASCII_PUNCTUATION.search(prose(good)), good
