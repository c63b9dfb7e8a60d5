"""Faults from outside with real processes on a real SQLite file: writes the app did not make,
an unreadable row, a refused runtime directory, names that would drive the terminal."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import EVENT_DEADLINE, wait_for

pytestmark = pytest.mark.slow


def env_for(data: Path, runtime_dir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(DOMI_DATA_DIR=str(data), QT_QPA_PLATFORM="offscreen")
    env["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={data}/no-such-bus"
    if runtime_dir is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    return env


def cli(
    data: Path, *args: str, runtime_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env_for(data, runtime_dir), timeout=60,
    )  # fmt: skip


def ok(data: Path, *args: str, runtime_dir: Path | None = None) -> Any:
    done = cli(data, *args, runtime_dir=runtime_dir)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def sql(data: Path, statement: str, *params: object) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(data / "domi.sqlite3")) as db, db:
        return db.execute(statement, params).fetchall()


def reachable(data: Path) -> bool:
    done = cli(data, "status", "--json")
    return done.returncode == 0 and json.loads(done.stdout)["running"] is True


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A private runtime directory where no app listens: the CLI writes the database itself."""
    path = tmp_path / "runtime"
    path.mkdir(mode=0o700)
    return path


def start_daemon(data: Path, runtime_dir: Path | None = None) -> subprocess.Popen[bytes]:
    with (data / "daemon.stderr").open("ab") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=env_for(data, runtime_dir), stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip


def stop_daemon(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM and its exit code; one that has not quit by the deadline is killed (and the
    timeout raised): nothing is left running after its test."""
    process.terminate()
    try:
        return process.wait(timeout=EVENT_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
        raise


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        wait_for(lambda: reachable(data), EVENT_DEADLINE, "the daemon's socket")
        yield process
    finally:
        assert stop_daemon(process) == 0


def add(data: Path, name: str, runtime_dir: Path | None = None) -> int:
    created = ok(data, "schedule", "add", name, "--cron", "* * * * *", "--tz", "UTC", "--json",
                 "--", "true", runtime_dir=runtime_dir)  # fmt: skip
    return int(created["id"])


def test_schedules_the_cli_wrote_directly_are_planned_by_the_app_at_its_next_wake(
    data: Path, elsewhere: Path, daemon: subprocess.Popen[bytes]
) -> None:
    first = add(data, "through the socket")
    direct = [add(data, f"direct {i}", runtime_dir=elsewhere) for i in range(5)]
    listed = {s["id"]: s for s in ok(data, "schedule", "list", "--json")}
    # Written behind its back: not planned, unless a wake (a minute turning, on a slow machine)
    # has already re-read them.
    if "changed by another process" not in (data / "daemon.stderr").read_text():
        assert [listed[i]["next_run"] for i in direct] == [None] * 5
    ok(data, "schedule", "enable", str(first))  # any wake will do; this one comes at once

    def planned() -> dict[int, Any] | None:
        listed = {s["id"]: s for s in ok(data, "schedule", "list", "--json")}
        return listed if all(listed[i]["next_run"] is not None for i in direct) else None

    # The wake comes after the reply to the enable: until it has planned them.
    wait_for(planned, EVENT_DEADLINE, "the wake to plan the schedules the CLI wrote")
    assert "changed by another process" in (data / "daemon.stderr").read_text()


def test_one_unreadable_row_disables_only_its_schedule_and_the_39_others_fire(
    data: Path,
) -> None:
    ids = [add(data, f"job {i}") for i in range(40)]
    bad = ids[17]
    sql(data, "UPDATE schedules SET action = 'not json' WHERE id = ?", bad)
    assert sql(data, "PRAGMA quick_check") == [("ok",)]
    # A due two minutes ago: the first wake owes every healthy schedule a catch-up run.
    sql(data, "UPDATE schedules SET last_due = last_due - 120000000")
    process = start_daemon(data)
    try:
        wait_for(lambda: reachable(data), EVENT_DEADLINE, "the daemon's socket")

        def fired() -> set[int]:
            return {row[0] for row in sql(data, "SELECT DISTINCT schedule_id FROM runs")}

        wait_for(lambda: fired() == set(ids) - {bad}, EVENT_DEADLINE, "39 schedules fired")
        listing = cli(data, "schedule", "list")
        assert listing.returncode == 0, listing.stderr
        row = next(line for line in listing.stdout.splitlines() if line.startswith(f"{bad} "))
        assert "BROKEN" in row
        assert f"schedule {bad} " in listing.stderr and "cannot be read" in listing.stderr
    finally:
        assert stop_daemon(process) == 0
    log = (data / "daemon.stderr").read_text()
    assert f"schedule {bad} cannot be evaluated" in log


@pytest.fixture
def refused(tmp_path: Path) -> Path:
    path = tmp_path / "shared-runtime"
    path.mkdir()
    path.chmod(0o777)
    return path


def test_a_refused_runtime_directory_is_one_line_and_schedules_still_work(
    data: Path, refused: Path
) -> None:
    added = cli(data, "schedule", "add", "x", "--cron", "0 9 * * *", "--", "true",
                runtime_dir=refused)  # fmt: skip
    assert added.returncode == 0, added.stderr
    listed = cli(data, "schedule", "list", runtime_dir=refused)
    assert listed.returncode == 0 and " x " in listed.stdout
    (warning,) = listed.stderr.strip().splitlines()
    assert str(refused) in warning and "mode is 777" in warning and "directly" in warning
    status = cli(data, "status", runtime_dir=refused)
    assert status.returncode == 3 and "Traceback" not in status.stderr
    assert (
        status.stdout.startswith("domi-desktop cannot be reached: ")
        and str(refused) in status.stdout
    )


def test_the_app_runs_without_a_socket_when_the_runtime_directory_is_refused(
    data: Path, refused: Path
) -> None:
    process = start_daemon(data, refused)
    try:
        wait_for(
            lambda: (
                "no RPC socket" in (data / "daemon.stderr").read_text()
                and "wake (start)" in (data / "daemon.stderr").read_text()
            ),
            EVENT_DEADLINE,
            "the daemon's first wake",
        )
        assert process.poll() is None
    finally:
        assert stop_daemon(process) == 0


def test_names_cannot_drive_the_terminal(data: Path) -> None:
    refused = cli(data, "schedule", "add", "evil\x1b[2J", "--cron", "* * * * *", "--", "true")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "domi-desktop: name: has a control character (U+001B) at position 5: "
        "a name is one printable line"
    )
    schedule_id = add(data, "plain")
    # Written before this check existed, or by hand: shown escaped, never raw.
    sql(
        data, "UPDATE schedules SET name = ? WHERE id = ?", "a\nb\x1b[31m\u202eexe.txt", schedule_id
    )
    for args in (("schedule", "list"), ("schedule", "show", str(schedule_id))):
        shown = ok(data, *args)
        assert "\x1b" not in shown and "\u202e" not in shown
        assert "a\\nb\\x1b[31m\\u202eexe.txt" in shown


def test_a_database_file_restored_under_the_running_app_is_left_as_restored(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    # A restore moves a backup over domi.sqlite3 while the app runs. Writing on to
    # the file it has open (its log meeting the new file at the next start) undid the restore.
    kept = add(data, "in the backup")
    backup = data.parent / "backup.sqlite3"
    with (
        closing(sqlite3.connect(data / "domi.sqlite3")) as live,
        closing(sqlite3.connect(backup)) as copy,
    ):
        live.backup(copy)
    lost = add(data, "added after the backup")
    os.replace(backup, data / "domi.sqlite3")

    def said() -> str | None:
        problem = ok(data, "status", "--json")["store"]["problem"]
        return problem if problem and "replaced" in problem else None

    problem = wait_for(said, EVENT_DEADLINE, "the app to see its file replaced")
    assert "quit and start domi-desktop" in str(problem)
    # Written through the app now: refused, never into the file it had open.
    done = cli(data, "schedule", "add", "refused", "--cron", "* * * * *", "--", "true")
    assert done.returncode != 0
    assert stop_daemon(daemon) == 0
    # The restore stands: the backup's schedules, not the one added after it; the file whole.
    assert sql(data, "PRAGMA integrity_check") == [("ok",)]
    assert [row[0] for row in sql(data, "SELECT id FROM schedules ORDER BY id")] == [kept]
    restarted = start_daemon(data)
    try:
        wait_for(lambda: reachable(data), EVENT_DEADLINE, "the app on the restored file")
        assert ok(data, "status", "--json")["store"]["problem"] is None
        assert [s["id"] for s in ok(data, "schedule", "list", "--json")] == [kept]
    finally:
        assert stop_daemon(restarted) == 0
    assert lost != kept
