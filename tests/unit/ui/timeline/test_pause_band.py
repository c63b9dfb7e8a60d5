""" "Pause all" in the Timeline: one band with its dues counted in it, said in a line under the
strip (in English and Chinese), and none of its dues drawn or reached one by one."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, FireClaim, RunStatus, SkipReason
from domi_desktop.store import Store, pauses
from domi_desktop.ui import i18n
from domi_desktop.ui.timeline.window import TimelineWindow
from tests.support.timeline_week import NOW, START, Week

HOUR = timedelta(hours=1)


def _pause_with_three_dues(store: Store) -> int:
    """Paused Fri 10:00-13:00 (Riga); an hourly schedule's three dues in it skipped for it."""
    start = (NOW - 60 * HOUR).replace(minute=0, second=0, microsecond=0)
    schedule = store.create_schedule("Hourly check", "30 * * * *", "UTC",
                                     CommandAction(argv=("true",)), now=start - HOUR)  # fmt: skip
    writer = store.writer()
    try:
        writer.transact(lambda cursor: pauses.began(cursor, "laptop", start))
        for hours in range(3):
            due = start + hours * HOUR + timedelta(minutes=30)
            last = store.get_schedule(schedule.id).last_due
            store.claim_fire(FireClaim(schedule.id, last, due, due, status=RunStatus.skipped,
                                       reason=SkipReason.paused))  # fmt: skip
        writer.transact(lambda cursor: pauses.ended(cursor, "laptop", start + 3 * HOUR))
    finally:
        writer.close()
    return schedule.id


def test_a_pause_is_one_band_with_its_dues_counted_not_ticked(
    qtbot: QtBot, store: Store, week: Week
) -> None:
    schedule_id = _pause_with_three_dues(store)
    window = TimelineWindow(store, lambda _run: None, now=lambda: NOW)
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show_period(START, 7)
    data = window.view.data
    assert data is not None
    [pause] = data.pauses
    assert pause.dues == 3
    [lane] = [lane for lane in data.lanes if lane.schedule_id == schedule_id]
    assert lane.stories == ()  # counted in the band, not ticked one by one
    assert len(data.dues()) == 68  # the week's own dues are all still there
    said = window.findChild(QLabel, "timelinePauses")
    assert said is not None and not said.isHidden()
    assert said.text().startswith("Paused all schedules Fri ")
    assert said.text().endswith("(3 dues not run)")
    try:
        i18n.set_language("zh")
        window.retranslate()
        assert "全部计划已暂停" in said.text() and "3 次到期未运行" in said.text()
    finally:
        i18n.set_language("en")
