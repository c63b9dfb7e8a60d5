"""``domi-desktop store migrate`` from the command line: a laptop's file into PostgreSQL and back."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.cli import main
from domi_desktop.model import CommandAction, FireClaim
from domi_desktop.store import Store, pauses, spans
from domi_desktop.store.backend import STORE_ENV
from domi_desktop.store.copy import PAUSES, SPANS

BACKENDS = ("postgresql",)


def test_a_laptops_store_goes_into_postgresql_and_back_with_its_history_and_last_due(
    data_dir: Path, tmp_path: Path, now: datetime, capsys: pytest.CaptureFixture[str]
) -> None:
    url = os.environ.pop(STORE_ENV)  # this test starts from the SQLite file
    due = now + timedelta(minutes=1)
    with Store.open(data_dir, now=now) as laptop:
        schedule = laptop.create_schedule(
            "a", "* * * * *", "UTC", CommandAction(), notes="why:\tcall Ana", now=now
        )
        laptop.claim_fire(FireClaim(schedule.id, expected_last_due=now, due=due, fired_at=due))
        writer = laptop.writer()  # the machine's story, as the app's diary writes it
        writer.transact(lambda cursor: spans.started(cursor, laptop.machine, now))
        writer.transact(lambda cursor: spans.falling_asleep(cursor, laptop.machine, due))
        writer.transact(lambda cursor: pauses.began(cursor, laptop.machine, now))
        writer.transact(lambda cursor: pauses.ended(cursor, laptop.machine, due))
        writer.close()
        expected = laptop.dump()
        assert [row[1] for row in expected.rows[SPANS]] == ["awake", "asleep"]
        assert len(expected.rows[PAUSES]) == 1  # "Pause all" goes along

    assert main(["--data-dir", str(data_dir), "store", "migrate", "--to", url]) == 0
    assert "copied 1 schedules and 1 runs" in capsys.readouterr().out
    with Store.open(data_dir, now=now, url=url) as shared:
        assert shared.dump() == expected
        assert shared.get_schedule(schedule.id).last_due == due
        assert shared.get_schedule(schedule.id).notes == "why:\tcall Ana"

    # A second copy would overwrite: refused, unless --force.
    assert main(["--data-dir", str(data_dir), "store", "migrate", "--to", url]) == 2
    assert "already holds 1 schedules and 1 runs" in capsys.readouterr().err

    back = tmp_path / "back"
    assert main(["--data-dir", str(back), "store", "migrate", "--from", url]) == 0
    with Store.open(back, now=now) as copy:
        assert copy.dump() == expected
    assert main(["--data-dir", str(back), "store", "migrate"]) == 2
    assert "needs --to URL or --from URL" in capsys.readouterr().err
