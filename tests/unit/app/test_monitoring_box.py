"""The Monitoring box end to end: the tray app's editor on the engine's thread, a schedule whose
check domi makes with a project API key on a local Healthchecks; "Send a test ping" goes from the
GUI through the engine's monitors and reaches the check, the box shows the answer and the check's
state, and the machine heartbeat opens Settings at it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from domi_desktop.app.gui import connect
from domi_desktop.model import CommandAction, Monitor, Policies
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.settings import SettingsDialog
from domi_desktop.ui.tray import TrayApp
from tests.support.engine import running_engine
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks

API_KEY = "hcw_box_api_key_0123456789abcdef"
WAIT_MS = 60_000
"""A safety net for the engine's and the monitor's threads on a loaded machine."""


@pytest.fixture
def hc() -> Iterator[FakeHealthchecks]:
    with FakeHealthchecks(API_KEY) as server:
        yield server


@pytest.fixture
def tray(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hc: FakeHealthchecks
) -> Iterator[TrayApp]:
    monkeypatch.setenv("TZ", "Europe/Riga")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    now = datetime.now(UTC)
    monitor = Monitor(healthchecks_key="hc-key", healthchecks_api=hc.url)
    with Store.open(tmp_path / "data", now=now) as store:
        store.create_schedule("Backup", "0 3 * * *", "Europe/Riga",
                              CommandAction(argv=(sys.executable, "-c", "pass")),
                              Policies(monitor=monitor), now=now)  # fmt: skip
        secrets = MemorySecretStore({"hc-key": API_KEY})
        with running_engine(store, secrets=secrets) as engine:
            app = TrayApp(qapp, engine.handle)
            connect(app, engine.handle)
            yield app
            app.close()


def test_a_test_ping_from_the_box_reaches_healthchecks(
    qtbot: QtBot, tray: TrayApp, hc: FakeHealthchecks
) -> None:
    tray.open_editor(1)
    dialog = tray._windows["editor"]
    assert isinstance(dialog, EditorDialog)
    button = dialog.findChild(QAbstractButton, "testPing")
    checks = dialog.findChild(QLabel, "monitorChecks")
    result = dialog.findChild(QLabel, "testPingResult")
    assert button is not None and checks is not None and result is not None
    qtbot.waitUntil(button.isEnabled, timeout=WAIT_MS)  # the engine's answer came
    button.click()
    qtbot.waitUntil(lambda: "answered" in result.text() or "failed" in result.text(),
                    timeout=WAIT_MS)  # fmt: skip
    assert result.text().endswith("answered 200"), result.text()
    check = hc.by_name("Backup (domi #1)")
    assert [p.kind for p in check.pings] == ["log"]
    assert check.pings[0].body.startswith("test ping from domi-desktop")
    page = f"{hc.url}/checks/{check.code}/details/"
    qtbot.waitUntil(lambda: "test ping" in checks.text(), timeout=WAIT_MS)
    assert page in checks.text()
    assert "Last known state: new (no ping yet)" in checks.text()  # a log ping changes no state

    dialog.findChild(QAbstractButton, "openHeartbeat").click()  # type: ignore[union-attr]
    settings = tray._windows["settings"]
    assert isinstance(settings, SettingsDialog) and settings.isVisible()
    key = settings.findChild(QLineEdit, "heartbeatKey")
    assert key is not None
    qtbot.waitUntil(key.hasFocus, timeout=WAIT_MS)
    settings.close()
    dialog.close()
