"""The headless daemon as a real process on a real data dir: fires, signals, kill -9 and resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.support.processes import kill_strays, stop

pytestmark = pytest.mark.slow


def env_for(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SYSTEM_BUS_ADDRESS",)}
    env["DOMI_DATA_DIR"] = str(data)
    env["QT_QPA_PLATFORM"] = "offscreen"
    # No system bus: the daemon must say so and rely on the kernel's clock-set timer.
    env["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={data}/no-such-bus"
    return env


def run_cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env_for(data), timeout=60,
    )  # fmt: skip


def cli(data: Path, *args: str) -> Any:
    done = run_cli(data, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


class Daemon:
    def __init__(self, data: Path) -> None:
        self.log = (data / "daemon.stderr").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=env_for(data), stdout=subprocess.DEVNULL, stderr=self.log,
        )  # fmt: skip

    def stop(self, sig: int = signal.SIGTERM) -> int:
        try:
            return stop(self.process, sig)  # killed if it does not quit
        finally:
            self.log.close()


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    path.mkdir()
    yield path
    # Jobs lead their own sessions; kill any a test left behind.
    for pid_file in tmp_path.glob("*.pid"):
        for line in pid_file.read_text().split():
            with suppress(ProcessLookupError, ValueError, PermissionError):
                os.killpg(int(line), signal.SIGKILL)
    kill_strays(tmp_path)  # and an app a failed test did not stop


def runs(data: Path) -> list[dict[str, Any]]:
    return cli(data, "runs", "--limit", "100", "--json")  # type: ignore[no-any-return]


def test_headless_fires_once_at_start_up_for_missed_minutes_and_records_it(data: Path) -> None:
    # The on-time rule is proven on the fake clock (tests/unit/scheduler); this proves the wiring of the
    # real process (store, driver, runner, log) without waiting for a real minute boundary.
    out = data.parent / "out.txt"
    cli(data, "schedule", "add", "tick", "--cron", "* * * * *", "--tz", "UTC", "--shell",
        "--", f"date -u +%H:%M:%S >> {out}")  # fmt: skip
    with closing(sqlite3.connect(data / "domi.sqlite3")) as db, db:
        db.execute("UPDATE schedules SET last_due = last_due - 5 * 60 * 1000000")
    daemon = Daemon(data)
    try:
        fired = wait_for(
            lambda: [r for r in runs(data) if r["status"] == "succeeded"], EVENT_DEADLINE, "a fire"
        )
    finally:
        code = daemon.stop()
    assert code == 0
    (run,) = fired
    # The latest due is within the 60 s grace, so it runs on time; the older ones are skipped.
    assert run["trigger"] == "scheduled" and not run["late"]
    assert run["due"].endswith(":00+00:00") and run["missed_count"] >= 3
    skipped = [r for r in runs(data) if r["status"] == "skipped"]
    assert len(skipped) == run["missed_count"]
    assert out.read_text().strip()
    log = (data / "domi-desktop.log").read_text()
    assert "wake (start)" in log and "fire: schedule 1 'tick'" in log and "stopped" in log
    stderr = (data / "daemon.stderr").read_text()
    assert "no system bus (logind unavailable)" in stderr and "clock-set timer" in stderr


def test_kill_9_mid_run_then_restart_shows_interrupted_and_one_resumed_rerun(data: Path) -> None:
    pids = data.parent / "job.pid"
    cli(data, "schedule", "add", "new year", "--cron", "0 0 1 1 *", "--tz", "UTC", "--shell",
        "--", f"echo $$ >> {pids}; sleep 60")  # fmt: skip
    with closing(sqlite3.connect(data / "domi.sqlite3")) as db, db:
        # Last fired a year before the latest New Year: start-up owes one catch-up fire.
        db.execute("UPDATE schedules SET last_due = last_due - 400 * 86400 * 1000000")
    daemon = Daemon(data)
    wait_for(lambda: pids.exists() and pids.read_text().strip(), EVENT_DEADLINE, "the job to start")
    daemon.stop(signal.SIGKILL)
    first_job = int(pids.read_text().split()[0])
    os.killpg(first_job, signal.SIGKILL)
    (killed,) = runs(data)
    assert killed["status"] == "running" and killed["trigger"] == "catch_up" and killed["late"]

    daemon = Daemon(data)
    try:
        wait_for(
            lambda: len(pids.read_text().split()) == 2, EVENT_DEADLINE, "the resumed job to start"
        )
        history = runs(data)
    finally:
        assert daemon.stop() == 0
    by_id = {r["id"]: r for r in history}
    assert by_id[killed["id"]]["status"] == "interrupted"
    (resumed,) = [r for r in history if r["trigger"] == "resumed"]
    assert resumed["resumed_from"] == killed["id"]
    fires = [r for r in runs(data) if r["trigger"] in ("scheduled", "catch_up")]
    assert len(fires) == 1, "the due fired once, never twice"
    assert by_id[resumed["id"]]["status"] == "running"
    final = {r["id"]: r for r in runs(data)}
    assert final[resumed["id"]]["status"] == "interrupted"  # SIGTERM stopped it, and said so
    assert "quit" in final[resumed["id"]]["reason"]


def test_sigint_stops_it_cleanly_too(data: Path) -> None:
    daemon = Daemon(data)
    state = wait_for(
        lambda: json.loads(run_cli(data, "status", "--json").stdout).get("running"),
        EVENT_DEADLINE,
        "rpc",
    )
    assert state is True
    status = json.loads(run_cli(data, "status", "--json").stdout)
    assert status["gui"] is False and status["pid"] == daemon.process.pid
    assert status["last_wake"]["reason"] == "start"
    log = data / "domi-desktop.log"
    wait_for(lambda: log.exists() and "wake (start)" in log.read_text(), EVENT_DEADLINE, "start")
    assert daemon.stop(signal.SIGINT) == 0


def test_a_corrupt_database_is_refused_with_its_name_and_left_alone(data: Path) -> None:
    db = data / "domi.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", "--headless"],
        capture_output=True, text=True, env=env_for(data), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert str(db) in done.stderr and "Traceback" not in done.stderr
    assert db.read_bytes() == before


def test_a_database_damaged_inside_is_refused_at_start_with_the_one_line_reason(
    data: Path,
) -> None:
    for name in ("a", "b"):
        cli(data, "schedule", "add", name, "--cron", "* * * * *", "--", "true")
    db = data / "domi.sqlite3"
    with closing(sqlite3.connect(db)) as connection:
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'schedules'"
        ).fetchone()
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    with db.open("r+b") as file:  # the header stays sound: only the table's page is garbage
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", "--headless"],
        capture_output=True, text=True, env=env_for(data), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (reason,) = [line for line in done.stderr.splitlines() if "damaged" in line]
    assert reason.startswith("domi-desktop: the database") and str(db) in reason
