"""A database another process holds locked for seconds, at each step of the fire path, then a
``kill -9`` of the app: 0 double fires, 0 lost dues, 0 stuck runs, never two
live copies of the job.

Real parts throughout: the headless app on a temp data dir (``paused_app.py`` holds its recorder
at the step under test until the lock is taken), the lock (``BEGIN IMMEDIATE`` in a separate
``sqlite3`` process), the job (a shell with a tagged grandchild), psutil watching the copies.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.fakes import wait_for
from tests.support.locks import write_lock
from tests.system.test_kill_soak import Watch, cli, env_for, sql

pytestmark = [pytest.mark.slow, pytest.mark.linux_only]

HERE = Path(__file__).resolve().parent
STEPS = {
    "claim": "before the claim",
    "start": "between the claim and the start",
    "record_jobs": "before the pid is on record",
    "finish": "before the result is written",
}


def micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def start(data: Path, *command: str) -> subprocess.Popen[bytes]:
    with (data / "app.stderr").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, *command], env=env_for(data), stdout=subprocess.DEVNULL, stderr=log
        )


def quit_app(app: subprocess.Popen[bytes]) -> None:
    if app.poll() is None:
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(60)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()


@pytest.mark.parametrize("step", list(STEPS), ids=list(STEPS.values()))
def test_a_lock_held_at_a_step_then_kill_9_loses_nothing_and_doubles_nothing(
    step: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    gate = tmp_path / "gate"
    gate.mkdir()
    log = data / "domi-desktop.log"
    tag = f"slowdb-{step}-{tmp_path.name}"
    # The finish step needs a job that ends; the others one that outlives the kill.
    seconds = 1 if step == "finish" else 60
    job = f"sh -c 'sleep {seconds}; :' {tag} & wait"
    cli(data, "schedule", "add", tag, "--cron", "* * * * *", "--tz", "UTC", "--shell", "--", job)
    # The last minute boundary is due at once: the app's first wake catches it up.
    now = datetime.now(UTC)
    sql(data, "UPDATE schedules SET last_due = ?", micros(now - timedelta(seconds=90)))
    watch = Watch([tag])
    app = start(data, str(HERE / "paused_app.py"), step, str(gate))
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for((gate / "paused").exists, 60, f"the app {STEPS[step]}")
        with write_lock(data / "domi.sqlite3"):
            (gate / "go").touch()
            wait_for(
                lambda: log.exists() and "writes are held up" in log.read_text(), 60, "the lock"
            )
            app.send_signal(signal.SIGKILL)
            app.wait(30)
        starts = log.read_text().count("wake (start)")
        second = start(data, "-m", "domi_desktop", "--headless")
        # Settled: the restarted app's first wake is over, the due is on record and nothing of
        # this schedule is left half-done.
        wait_for(lambda: log.read_text().count("wake (start)") > starts, 90, "the restart")
        wait_for(lambda: settled(data), 90, "the restarted app to catch up")
        wait_for(lambda: watch.most[tag] > 0, 60, "the job to run")
        quit_app(second)
        # A quit leaves a run whose job would not end in time ``running``, for the next start
        # to stop what is left of it: one more start and quit settles it, as a user's next
        # login would.
        starts = log.read_text().count("wake (start)")
        second = start(data, "-m", "domi_desktop", "--headless")
        wait_for(lambda: log.read_text().count("wake (start)") > starts, 90, "the last start")
    finally:
        app.kill()
        app.wait()
        if second is not None:
            quit_app(second)
        most = watch.stop()
    assert most == {tag: 1}, f"copies alive at once: {most}"
    fired = sql(
        data,
        "SELECT due, count(*) FROM runs WHERE due IS NOT NULL AND status != 'skipped' "
        "GROUP BY due HAVING count(*) > 1",
    )
    assert fired == [], "a due ran twice"
    assert sql(data, "SELECT id, reason FROM runs WHERE status = 'running'") == []


def settled(data: Path) -> bool:
    """The first due is on record, and every run of it either ended or runs a live job here."""
    claimed = sql(data, "SELECT count(*) FROM runs WHERE due IS NOT NULL")[0][0]
    if not claimed:
        return False
    running = sql(data, "SELECT count(*) FROM runs WHERE status = 'running' AND job_pid IS NULL")
    return bool(running[0][0] == 0)
