"""``domi-desktop timeline`` tells "Pause all" as one pause with its dues counted in it, not as
one skipped line per due."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from domi_desktop.model import CommandAction, FireClaim, RunStatus, SkipReason
from domi_desktop.store import Store, pauses
from tests.support.cli import Cli

HOUR = timedelta(hours=1)


def _paused_afternoon(data: Path, now: datetime) -> None:
    with Store.open(data, now=now - 2 * 24 * HOUR) as store:
        schedule = store.create_schedule("Sync notes", "*/30 * * * *", "UTC",
                                         CommandAction(argv=("true",)), now=now - 24 * HOUR)  # fmt: skip
        start, end = now - 5 * HOUR, now - 2 * HOUR
        writer = store.writer()
        try:
            writer.transact(lambda cursor: pauses.began(cursor, store.machine, start))
            for minutes in (30, 90, 150):
                due = start + timedelta(minutes=minutes)
                last = store.get_schedule(schedule.id).last_due
                store.claim_fire(FireClaim(schedule.id, last, due, due, status=RunStatus.skipped,
                                           reason=SkipReason.paused))  # fmt: skip
            writer.transact(lambda cursor: pauses.ended(cursor, store.machine, end))
        finally:
            writer.close()


def test_a_pause_is_one_line_with_its_dues_counted(cli: Cli, tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    _paused_afternoon(tmp_path / "data", now)

    code, out, err = cli("timeline", "--days", "1")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if "Paused all schedules" in line]
    assert line.endswith("(3 dues not run)"), line
    assert "paused" not in out.replace(line, "").lower(), out

    code, out, err = cli("timeline", "--days", "1", "--json")
    assert code == 0, err
    told = json.loads(out)
    [pause] = told["pauses"]
    assert pause["dues"] == 3 and pause["end"] is not None
    assert [due for s in told["schedules"] for due in s["dues"]] == []
