"""History shows a run waiting for its disk, and the days it ran once the disk came: the reason
in the Reason column and in the row's tooltip; a picture for the README."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from domi_desktop.model import CommandAction, Conditions, FireClaim, Policies, RunStatus
from domi_desktop.store import Store
from domi_desktop.ui.history.model import Column
from domi_desktop.ui.history.window import HistoryWindow
from tests.unit.ui.history import test_history as history_tests

berlin = history_tests.berlin
"""History's own tests' OS zone."""

NOW = datetime(2026, 3, 4, 9, 30, tzinfo=UTC)
SHOTS = os.environ.get("DOMI_SCREENSHOTS")


def test_a_run_waiting_for_its_disk_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    with Store.open(tmp_path / "data", now=NOW - timedelta(days=3)) as store:
        policies = Policies(conditions=Conditions(volume="Backup", wait_at_most=timedelta(days=3)))
        action = CommandAction(shell='rsync -a ~/Documents/ "$DOMI_VOLUME_PATH/documents/"')
        backup = store.create_schedule(
            "Backup to the USB disk", "@daily", "UTC", action, policies,
            now=NOW - timedelta(days=3),
        )  # fmt: skip
        for days_ago, plugged_at in ((2, 10 * 60 + 12), (1, 18 * 60 + 3)):
            due = (NOW - timedelta(days=days_ago)).replace(hour=0, minute=0)
            run_id = store.claim_fire(
                FireClaim(backup.id, store.get_schedule(backup.id).last_due, due, due,
                          status=RunStatus.waiting, reason="waiting for the disk Backup")
            )  # fmt: skip
            assert run_id is not None
            started = due + timedelta(minutes=plugged_at)
            waited = f"{plugged_at // 60} hours {plugged_at % 60} minutes"
            store.start_waiting(run_id, started, store.log_path_for(run_id), late=True,
                                reason=f"started after waiting {waited} for the disk Backup")  # fmt: skip
            store.finish_run(run_id, status=RunStatus.succeeded,
                             finished_at=started + timedelta(minutes=4), exit_code=0)  # fmt: skip
        due = NOW.replace(hour=0, minute=0)
        waiting = store.claim_fire(
            FireClaim(backup.id, store.get_schedule(backup.id).last_due, due, due,
                      status=RunStatus.waiting, reason="waiting for the disk Backup")
        )  # fmt: skip
        window = HistoryWindow(store)
        qtbot.addWidget(window)
        window.resize(1100, 300)
        window.show()
        model = window.model
        qtbot.waitUntil(lambda: model.rowCount() == 3)
        row = next(r for r in range(3) if model.run_at(r).id == waiting)
        assert model.index(row, Column.reason).data() == "waiting for the disk Backup"
        tooltip = model.index(row, Column.status).data(Qt.ItemDataRole.ToolTipRole)
        assert "waiting for the disk Backup" in tooltip
        if SHOTS:
            window.grab().save(str(Path(SHOTS) / "history-waiting-disk.png"))
