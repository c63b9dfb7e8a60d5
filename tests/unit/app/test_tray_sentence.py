"""Resource conditions in the tray: a schedule that waits for a disk says so in one sentence at the top of
its menu, and in the Schedules window's tooltip of its meaning; the others are unchanged."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt

from domi_desktop.events import RunFinished
from domi_desktop.model import (
    CommandAction,
    Conditions,
    Policies,
    RunStatus,
    Schedule,
    SessionTriggers,
)
from domi_desktop.runtime.view import WaitingRun
from domi_desktop.ui import i18n
from domi_desktop.ui.schedule_model import Column
from domi_desktop.ui.sentence import schedule_sentence
from domi_desktop.ui.tray import TrayApp
from tests.unit.app import test_tray_menu as tray_menu_tests
from tests.unit.app.test_tray_menu import Recorded, texts

BACKUP = Policies(conditions=Conditions(volume="Backup", wait_at_most=timedelta(days=3)))
SENTENCE = (
    "At 00:00, every day, when the disk Backup is plugged in; waits at most 3 days, then runs "
    "anyway."
)


tray = tray_menu_tests.tray
"""The tray menu tests' own app: "Rate-limit report" and "Every minute", plain schedules."""


@pytest.fixture
def with_backup(tray: TrayApp) -> TrayApp:
    action = CommandAction(argv=(sys.executable, "-c", "pass"))
    tray.host.store.create_schedule(
        "Backup", "0 0 * * *", "UTC", action, BACKUP, now=datetime.now(UTC)
    )
    tray.engine.reload()  # type: ignore[attr-defined]
    return tray


def test_the_disk_s_schedule_says_it_in_one_sentence(with_backup: TrayApp) -> None:
    tray = with_backup
    tray.rebuild_menu()
    by_name = {a.text().split(" · ")[0]: a.menu() for a in tray.menu.actions() if a.menu()}
    backup, report = by_name["Backup"], by_name["Rate-limit report"]
    assert backup is not None and report is not None
    assert texts(backup) == [
        SENTENCE,
        "Run now",
        "Skip next",
        "Snooze 1 hour",
        "Pause",
        "Edit…",
        "History…",
    ]
    assert not backup.actions()[0].isEnabled()
    assert texts(report) == ["Run now", "Skip next", "Snooze 1 hour", "Pause", "Edit…", "History…"]
    model = tray.main_window.model
    model.load()
    rows = {model.index(r, Column.title).data(): r for r in range(model.rowCount())}
    tip = model.index(rows["Backup"], Column.meaning).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == SENTENCE
    assert (
        model.index(rows["Rate-limit report"], Column.meaning).data(Qt.ItemDataRole.ToolTipRole)
        is None
    )


def test_moments_only_say_so() -> None:
    action = CommandAction(argv=("true",))
    only = Policies(session=SessionTriggers(at_login=True, only=True))
    also = Policies(session=SessionTriggers(at_unlock=True))
    assert schedule_sentence(Schedule(1, "a", "@yearly", "UTC", action, policies=only)) == (
        "Only at login (not by its time)."
    )
    assert schedule_sentence(Schedule(2, "b", "@daily", "UTC", action, policies=also)) == (
        "At 00:00, every day. Also at unlock."
    )
    i18n.set_language("zh")
    try:
        chinese = schedule_sentence(Schedule(2, "b", "@daily", "UTC", action, policies=also))
    finally:
        i18n.set_language("en")
    assert chinese == "每天 00:00。也在解锁时运行。"  # Chinese sentences are not spaced


def test_the_tray_tooltip_names_what_a_waiting_run_waits_for(with_backup: TrayApp) -> None:
    tray = with_backup
    known = {s.name: s for s in tray.host.store.list_schedules()}
    engine = tray.host.engine
    waiting = [WaitingRun(41, known["Backup"].id, "Backup", "waiting for the disk Backup")]
    engine.state = replace(engine.state, waiting=tuple(waiting))  # type: ignore[misc]
    tray.update_look()
    assert "Backup: waiting for the disk Backup" in tray.tray.toolTip().splitlines()
    waiting += [
        WaitingRun(r, known["Every minute"].id, "Every minute", "busy") for r in range(42, 46)
    ]
    engine.state = replace(engine.state, waiting=tuple(waiting))  # type: ignore[misc]
    tray.update_look()
    assert tray.tray.toolTip().splitlines()[-1] == "2 more waiting"
    engine.state = replace(engine.state, waiting=())  # type: ignore[misc]
    tray.update_look()
    assert "waiting" not in tray.tray.toolTip()


def test_a_wait_that_ran_out_is_told_once(tray: TrayApp) -> None:
    recorded = Recorded()
    tray.notifier.close()  # the tray's own, replaced: its thread ends with it
    tray.notifier = recorded
    reason = "skipped after waiting 3 days for the disk Backup"
    tray.on_event(RunFinished(9, 1, "Backup", RunStatus.skipped, reason, None, timedelta(0)))
    tray.on_event(RunFinished(8, 1, "Backup", RunStatus.skipped, "busy", None, timedelta(0)))
    (notice,) = recorded.notices
    assert (notice.title, notice.body, notice.run_id) == ("Did not run: Backup", reason, 9)


def test_a_wait_that_ran_out_is_told_in_the_chosen_language(tray: TrayApp) -> None:
    recorded = Recorded()
    tray.notifier.close()  # the tray's own, replaced: its thread ends with it
    tray.notifier = recorded
    reason = "skipped after waiting 3 days 2 hours for the disk Backup"
    i18n.set_language("zh")
    try:
        tray.on_event(RunFinished(9, 1, "Backup", RunStatus.skipped, reason, None, timedelta(0)))
        failed = RunFinished(10, 1, "Backup", RunStatus.failed, "exit code 3", 3, timedelta(0))
        tray.on_event(failed)
    finally:
        i18n.set_language("en")
    skipped, failure = recorded.notices
    assert (skipped.title, skipped.body) == ("未运行：Backup", "等待磁盘 Backup 3 天 2 小时后跳过")
    assert failure.body == "退出码 3"


def test_a_failure_s_notification_shows_the_last_line_the_job_printed_to_stderr(
    tray: TrayApp, qtbot: Any
) -> None:
    recorded = Recorded()
    tray.notifier.close()  # the tray's own, replaced: its thread ends with it
    tray.notifier = recorded
    script = (
        "import sys\nprint('working...', flush=True)\n"
        "print('Traceback (most recent call last):', file=sys.stderr)\n"
        "print('PermissionError: [Errno 13] /srv/backup', file=sys.stderr)\nsys.exit(3)"
    )
    made = tray.host.service.create_schedule(
        {"name": "Backup", "expr": "0 3 * * *", "tz": "UTC",
         "action": {"kind": "command", "argv": [sys.executable, "-c", script]}}
    )  # fmt: skip
    tray.engine.reload()  # type: ignore[attr-defined]
    tray.host.engine.run_now(made["id"])
    qtbot.waitUntil(lambda: bool(recorded.notices), timeout=60_000)
    (notice,) = recorded.notices
    assert notice.title == "Run failed: Backup"
    assert notice.body == "exit code 3\nPermissionError: [Errno 13] /srv/backup"
