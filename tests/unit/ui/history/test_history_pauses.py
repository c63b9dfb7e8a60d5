""" "Pause all" in History: one line above the table, "Paused all schedules ... (3 dues not run)",
in English and Chinese, and none of its dues listed as a skipped row, as the table is read and as
runs come in while it is open. A paused due with no pause on record (an older database) is still
listed: nothing recorded is hidden without the line that counts it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, FireClaim, RunStatus, Schedule, SkipReason
from domi_desktop.store import Store, pauses
from domi_desktop.ui import i18n
from domi_desktop.ui.history.window import HistoryWindow

HOUR = timedelta(hours=1)
NOW = datetime.now(UTC).replace(second=0, microsecond=0)
START = NOW - 5 * HOUR


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW - 48 * HOUR) as opened:
        yield opened


@pytest.fixture
def schedule(store: Store) -> Schedule:
    return store.create_schedule(
        "Sync notes", "*/30 * * * *", "UTC", CommandAction(argv=("true",)), now=NOW - 24 * HOUR
    )


def _skip(store: Store, schedule: Schedule, due: datetime) -> int:
    last = store.get_schedule(schedule.id).last_due
    claim = FireClaim(schedule.id, last, due, due, status=RunStatus.skipped,
                      reason=SkipReason.paused)  # fmt: skip
    run_id = store.claim_fire(claim)
    assert run_id is not None
    return run_id


def _pause(store: Store, *, end: datetime | None) -> None:
    writer = store.writer()
    try:
        writer.transact(lambda cursor: pauses.began(cursor, store.machine, START))
        if end is not None:
            writer.transact(lambda cursor: pauses.ended(cursor, store.machine, end))
    finally:
        writer.close()


def test_a_pause_is_one_line_and_its_dues_are_not_rows(
    qtbot: QtBot, store: Store, schedule: Schedule
) -> None:
    before = _skip(store, schedule, START - HOUR)  # paused with no pause on record: listed
    _pause(store, end=START + 3 * HOUR)
    for minutes in (30, 90, 150):
        _skip(store, schedule, START + timedelta(minutes=minutes))
    window = HistoryWindow(store)
    qtbot.addWidget(window)
    window.show()
    line = window.findChild(QLabel, "historyPauses")
    assert line is not None and line.isVisible()
    assert line.text().startswith("Paused all schedules ")
    assert line.text().endswith("(3 dues not run)")
    assert [window.model.run_at(row).id for row in range(window.model.rowCount())] == [before]
    assert window.model.total() == 1
    try:
        i18n.set_language("zh")
        window.retranslate()
        assert line.text().startswith("全部计划已暂停") and "3 次到期未运行" in line.text()
    finally:
        i18n.set_language("en")
        window.retranslate()


def test_a_due_skipped_while_history_is_open_goes_to_the_pause_not_a_row(
    qtbot: QtBot, store: Store, schedule: Schedule
) -> None:
    _pause(store, end=None)
    window = HistoryWindow(store)
    qtbot.addWidget(window)
    window.show()
    line = window.findChild(QLabel, "historyPauses")
    assert line is not None
    assert "since" in line.text() and line.text().endswith("(no due fell in it)")
    run_id = _skip(store, schedule, START + HOUR)
    window.run_changed(run_id)
    qtbot.waitUntil(lambda: line.text().endswith("(1 due not run)"), timeout=10_000)
    assert window.model.rowCount() == 0
