"""Real processes on one database file: racing claims, and claims killed at random moments."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import PROCESS_DIED, CommandAction, RunStatus, Trigger
from domi_desktop.store import DB_FILENAME, Store
from domi_desktop.store.codec import to_micros

Spawn = Callable[..., subprocess.Popen[str]]
Sql = Callable[..., list[tuple[object, ...]]]
MINUTE = timedelta(minutes=1)
SKIP_OFFSET = timedelta(seconds=30)
MINUTE_US = MINUTE // timedelta(microseconds=1)
SKIP_US = SKIP_OFFSET // timedelta(microseconds=1)
RACERS = 3
ROUNDS = 200
KILLS = 6


def _new_schedule(data_dir: Path, now: datetime) -> int:
    with Store.open(data_dir, now=now) as store:
        return store.create_schedule("raced", "* * * * *", "UTC", CommandAction(), now=now).id


def _rows(sql: Sql) -> list[tuple[int, str, str]]:
    """(due, status, trigger) of every run, read by a connection of another program."""
    return sql('SELECT due, status, "trigger" FROM runs')  # type: ignore[return-value]


def test_racing_processes_never_both_claim_the_same_due(
    data_dir: Path, now: datetime, spawn: Spawn
) -> None:
    schedule_id = _new_schedule(data_dir, now)
    racers = [spawn("race", data_dir, schedule_id, ROUNDS, now.isoformat()) for _ in range(RACERS)]
    for racer in racers:
        assert racer.stdout is not None
        assert racer.stdout.readline() == "ready\n"
    for racer in racers:  # the barrier opens: all of them start claiming at once
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    wins = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0, err
        wins.append(int(out))

    assert sum(wins) == ROUNDS
    with Store.open(data_dir, now=now) as store:
        fires = store.runs(schedule_id, status=RunStatus.running, limit=None)
        skipped = store.runs(schedule_id, status=RunStatus.skipped, limit=None)
        assert store.get_schedule(schedule_id).last_due == now + ROUNDS * MINUTE
    assert sorted(run.due for run in fires if run.due) == [
        now + i * MINUTE for i in range(1, ROUNDS + 1)
    ]
    assert sorted(run.due for run in skipped if run.due) == [
        now + i * MINUTE - SKIP_OFFSET for i in range(1, ROUNDS + 1)
    ]


@pytest.mark.posix_only  # SIGKILL
def test_a_process_killed_at_any_moment_of_a_fire_leaves_the_claim_all_or_nothing(
    data_dir: Path, now: datetime, spawn: Spawn, sql: Sql, backend: str
) -> None:
    schedule_id = _new_schedule(data_dir, now)
    moments: list[float] = []
    fired = 0
    for _ in range(KILLS):
        worker = spawn("churn", data_dir, schedule_id)
        assert worker.stdout is not None
        assert worker.stdout.readline() == "ready\n"
        # The one place where the tests sleep: to land the kill somewhere inside the fire loop.
        moments.append(random.uniform(0.02, 0.3))
        time.sleep(moments[-1])
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=30)
        killed_after = f"killed after {moments} s"

        if backend == "sqlite":
            with closing(sqlite3.connect(data_dir / DB_FILENAME)) as connection:
                assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with Store.open(data_dir, now=now) as store:
            last_due = store.get_schedule(schedule_id).last_due
            orphans = store.interrupt_orphans(now)
            assert all(run.reason == PROCESS_DIED for run in orphans)
            assert len(orphans) <= 1
            assert store.running_runs() == []
        assert last_due is not None
        rows = _rows(sql)
        fires = sorted(
            due
            for due, status, trigger in rows
            if trigger == Trigger.scheduled.value and status != RunStatus.skipped.value
        )
        skipped = {due for due, status, _ in rows if status == RunStatus.skipped.value}
        # Retention may have pruned the oldest rows (1,000 per schedule), never the newest.
        # last_due is the newest fire's due: never advanced without its row, nor the reverse;
        # and the fires are consecutive minutes, so none is there twice and none was lost.
        assert (fires[-1] if fires else to_micros(now)) == to_micros(last_due), killed_after
        assert fires == [fires[-1] - i * MINUTE_US for i in reversed(range(len(fires)))]
        # Each claim's skipped row exists exactly when its fire does (the oldest may be pruned).
        partners = {due - SKIP_US for due in fires}
        assert skipped <= partners, killed_after
        assert partners - skipped <= {min(partners, default=0)}, killed_after
        assert (last_due - now) // MINUTE >= fired
        fired = (last_due - now) // MINUTE
    assert fired > KILLS, "the worker should have fired between kills"
