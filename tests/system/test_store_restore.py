"""A backup put back while the app runs: ``store restore FILE`` (SQLite's backup API, the current
database kept aside), and a plain copy over the live file (the same inode) seen, said in
``status``, and kept as copied after the app quits: never silently undone by the app's log."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.support.fakes import wait_for
from tests.support.processes import stop
from tests.system.test_rpc_socket import cli, start_daemon

pytestmark = [pytest.mark.slow, pytest.mark.posix_only]


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        yield process
    finally:
        if process.poll() is None:
            assert stop(process) == 0


def _ok(data: Path, *args: str) -> str:
    done = cli(data, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _names(data: Path) -> list[str]:
    return [s["name"] for s in json.loads(_ok(data, "schedule", "list", "--json"))]


def _add(data: Path, name: str) -> None:
    _ok(data, "schedule", "add", name, "--cron", "0 9 * * *", "--", "true")


def _backup(data: Path, to: Path) -> None:
    with (
        closing(sqlite3.connect(data / "domi.sqlite3")) as live,
        closing(sqlite3.connect(to)) as copy,
    ):
        live.backup(copy)


def _problem(data: Path) -> str | None:
    status = json.loads(_ok(data, "status", "--json"))
    problem: str | None = status["store"]["problem"]
    return problem


def _log(data: Path) -> str:
    return "".join(path.read_text(errors="replace") for path in sorted(data.rglob("*.log*")))


def _wake_complaint(data: Path) -> str | None:
    lines = [line for line in _log(data).splitlines() if "re-read failed" in line]
    return lines[0] if lines else None


def test_store_restore_puts_a_backup_back_while_the_app_runs_and_keeps_the_current_one(
    data: Path, daemon: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    for name in ("alpha", "beta"):
        _add(data, name)
    _backup(data, tmp_path / "backup.sqlite3")
    _add(data, "gamma")
    restored = _ok(data, "store", "restore", str(tmp_path / "backup.sqlite3"))
    assert restored.startswith("restored 2 schedule(s) from ")
    wait_for(lambda: _names(data) == ["alpha", "beta"], 60, "the app showing the backup")
    [kept] = data.glob("domi.sqlite3.before-restore-*")
    with closing(sqlite3.connect(kept)) as aside:
        assert [row[0] for row in aside.execute("SELECT name FROM schedules")] == [
            "alpha", "beta", "gamma"
        ]  # fmt: skip
    _add(data, "delta")  # the app writes on, into the restored database
    assert _problem(data) is None
    assert stop(daemon) == 0
    assert _names(data) == ["alpha", "beta", "delta"]


def test_a_backup_copied_over_the_live_file_is_said_and_kept_as_copied(
    data: Path, daemon: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    for name in ("alpha", "beta"):
        _add(data, name)
    _backup(data, tmp_path / "backup.sqlite3")
    _add(data, "gamma")
    live = data / "domi.sqlite3"
    inode = live.stat().st_ino
    shutil.copyfile(tmp_path / "backup.sqlite3", live)  # cp backup domi.sqlite3
    assert live.stat().st_ino == inode
    problem = wait_for(lambda: _problem(data), 60, "status saying the file was copied over")
    assert "copied over the database" in str(problem)
    assert len(list(data.glob("domi.sqlite3.copied-*"))) == 1
    # The next wake (the scheduler's tick, at most a minute away) cannot read the schedules and
    # says why in the log: a SQLite file has no link to lose, it is never "unreachable".
    logged = wait_for(
        lambda: _wake_complaint(data), 90, "a wake saying the schedules cannot be read"
    )
    assert "copied over the database" in str(logged)
    assert "unreachable" not in _log(data)
    assert stop(daemon) == 0
    assert _names(data) == ["alpha", "beta"]
