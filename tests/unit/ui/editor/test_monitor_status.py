"""The Monitoring box's live part, offscreen, with the engine stood in for: it says what the feature
does, shows each check's page, state, last ping and last error as the engine answers, sends a test
ping through the engine and shows its answer or its error, keeps the test for the saved schedule,
and opens the machine heartbeat."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from domi_desktop.frontdoor.service import Service
from domi_desktop.monitor.status import CheckState, CheckStatus, PingKind, PingTrial
from domi_desktop.ui import i18n
from domi_desktop.ui.editor.dialog import EditorDialog
from domi_desktop.ui.editor.monitor_status import MonitorQueries

# The editor tests' fixtures: a service on a real store, English, the OS zone.
from tests.unit.ui.editor.test_editor_conditions import (  # noqa: F401
    NOW,
    child,
    english,
    os_zone,
)
from tests.unit.ui.editor.test_editor_monitoring import service  # noqa: F401

PAGE = "https://hc.example.org/checks/0b1c/details/"
SENT = datetime(2026, 3, 2, 14, 2, tzinfo=UTC)


class Engine:
    """Answers as the engine does: later, from the GUI thread's queue (here: when asked)."""

    def __init__(self, statuses: tuple[CheckStatus, ...], trial: PingTrial) -> None:
        self.statuses = statuses
        self.trial = trial
        self.asked: list[int] = []
        self.tested: list[int] = []

    def monitor_status(
        self, schedule_id: int, done: Callable[[tuple[CheckStatus, ...]], None]
    ) -> None:
        self.asked.append(schedule_id)
        done(self.statuses)

    def test_ping(self, schedule_id: int, done: Callable[[PingTrial], None]) -> None:
        self.tested.append(schedule_id)
        done(self.trial)


def _saved(qtbot: QtBot, service: Service) -> tuple[EditorDialog, int]:  # noqa: F811
    dialog = EditorDialog(service, now=lambda: NOW)
    qtbot.addWidget(dialog)
    child(dialog, QLineEdit, "name").setText("Backup")
    child(dialog, QLineEdit, "command").setText("backup --all")
    child(dialog, QLineEdit, "healthchecksKey").setText("hc-key")
    child(dialog, QLineEdit, "healthchecksApi").setText("https://hc.example.org")
    with qtbot.waitSignal(dialog.saved) as saved:
        child(dialog, QAbstractButton, "save").click()
    schedule_id = saved.args[0]
    again = EditorDialog(service, now=lambda: NOW, schedule_id=schedule_id)
    qtbot.addWidget(again)
    return again, schedule_id


def _down() -> CheckStatus:
    return CheckStatus(
        "Healthchecks", PAGE, CheckState.down, SENT, PingKind.failure, "Connection refused", 2
    )


def test_the_box_says_what_it_does_and_shows_each_checks_state(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    about = child(dialog, QLabel, "monitorAbout").text()
    for words in (
        "project API key",
        "OS keyring",
        "from this schedule",
        "while the computer sleeps",
    ):
        assert words in about
    checks = child(dialog, QLabel, "monitorChecks")
    assert "once the schedule is saved" in child(dialog, QLabel, "monitorChecks").text()
    engine = Engine((_down(),), PingTrial(SENT, 200))
    assert isinstance(engine, MonitorQueries)
    dialog.monitoring.attach(engine, schedule_id)
    assert engine.asked == [schedule_id]
    shown = checks.text()
    assert f'<a href="{PAGE}">{PAGE}</a>' in shown
    assert "Last known state: down" in shown
    assert "Last ping: " in shown and ", failure" in shown
    assert "Last error: Connection refused" in shown
    assert "Waiting to be sent: 2" in shown
    assert child(dialog, QAbstractButton, "testPing").isEnabled()
    assert not child(dialog, QAbstractButton, "openHeartbeat").isVisible()


def test_a_test_ping_goes_through_the_engine_and_its_answer_is_shown(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    up = CheckStatus("Healthchecks", PAGE, CheckState.up, SENT, PingKind.test)
    engine = Engine((up,), PingTrial(SENT, 200, state=CheckState.up))
    dialog.monitoring.attach(engine, schedule_id)
    child(dialog, QAbstractButton, "testPing").click()
    assert engine.tested == [schedule_id]
    when = SENT.astimezone().strftime("%H:%M")
    result = child(dialog, QLabel, "testPingResult")
    assert result.text() == f"Test ping sent {when}, answered 200"
    assert result.property("failed") is False
    assert "test ping" in child(dialog, QLabel, "monitorChecks").text()
    assert len(engine.asked) == 2  # the state asked again after the answer


def test_a_failed_test_ping_shows_its_error(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    engine = Engine((_down(),), PingTrial(SENT, error="Connection refused"))
    dialog.monitoring.attach(engine, schedule_id)
    child(dialog, QAbstractButton, "testPing").click()
    when = SENT.astimezone().strftime("%H:%M")
    result = child(dialog, QLabel, "testPingResult")
    assert result.text() == f"Test ping at {when} failed: Connection refused"
    assert result.property("failed") is True
    assert child(dialog, QAbstractButton, "testPing").isEnabled()  # the user may try again


def test_edited_fields_hold_the_test_until_saved(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    dialog.monitoring.attach(Engine((_down(),), PingTrial(SENT, 200)), schedule_id)
    button = child(dialog, QAbstractButton, "testPing")
    key = child(dialog, QLineEdit, "healthchecksKey")
    key.setText("other-key")
    assert not button.isEnabled()
    assert "Save first" in button.toolTip()
    key.setText("hc-key")
    assert button.isEnabled()


def test_a_schedule_with_no_check_has_no_test(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    dialog.monitoring.attach(Engine((), PingTrial(SENT, 200)), schedule_id)
    assert not child(dialog, QAbstractButton, "testPing").isEnabled()
    assert "No monitor is saved" in child(dialog, QLabel, "monitorChecks").text()


def test_the_machine_heartbeat_opens_from_the_box(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    opened: list[bool] = []
    dialog.monitoring.attach(
        Engine((), PingTrial(SENT, 200)), schedule_id, lambda: opened.append(True)
    )
    dialog.show()
    heartbeat = child(dialog, QAbstractButton, "openHeartbeat")
    assert heartbeat.isVisible()
    heartbeat.click()
    assert opened == [True]


def test_an_answer_after_the_editor_closed_is_dropped(
    qtbot: QtBot,
    service: Service,  # noqa: F811
) -> None:
    dialog, schedule_id = _saved(qtbot, service)
    later: list[Callable[[], None]] = []

    class Slow(Engine):
        def monitor_status(
            self, schedule_id: int, done: Callable[[tuple[CheckStatus, ...]], None]
        ) -> None:
            later.append(lambda: done((_down(),)))

        def test_ping(self, schedule_id: int, done: Callable[[PingTrial], None]) -> None:
            later.append(lambda: done(PingTrial(SENT, 200)))

    dialog.monitoring.attach(Slow((), PingTrial(SENT, 200)), schedule_id)
    dialog.monitoring.live.show_status((_down(),))
    child(dialog, QAbstractButton, "testPing").click()
    assert len(later) == 2
    gone: list[bool] = []
    dialog.monitoring.live.destroyed.connect(lambda *_: gone.append(True))
    dialog.deleteLater()
    qtbot.waitUntil(lambda: bool(gone))
    for answer in later:
        answer()  # no "C++ object already deleted"


@pytest.mark.parametrize("state", list(CheckState))
def test_every_state_and_kind_has_chinese_words(state: CheckState) -> None:
    from domi_desktop.ui.editor.monitor_status import describe

    i18n.reset_missing()
    i18n.set_language("zh")
    try:
        for kind in PingKind:
            describe(CheckStatus("Healthchecks", PAGE, state, SENT, kind, "x", 1))
        describe(CheckStatus("Healthchecks", None))
    finally:
        i18n.set_language("en")
    assert i18n.missing() == set()
