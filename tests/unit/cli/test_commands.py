"""The CLI's exact shapes, on a real data dir, no app running: ``cli.main(argv)`` in-process, and
a few subprocess runs of the real entry point."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.cli import main


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


Run = Callable[..., Done]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def run(data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.setenv("DOMI_DATA_DIR", str(data))
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)  # the secret commands say so
    runtime = data.parent / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))  # no app to find there

    def call(*args: str, stdin: str | None = None) -> Done:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's own errors
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return call


@pytest.fixture
def ok(run: Run) -> Callable[..., Any]:
    def call(*args: str) -> Any:
        done = run(*args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout

    return call


@pytest.fixture
def bad(run: Run) -> Callable[..., str]:
    def call(*args: str, stdin: str | None = None) -> str:
        done = run(*args, stdin=stdin)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stderr.strip()
        return done.stderr

    return call


def entry_point(
    data: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    (data.parent / "run").mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "DOMI_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(data.parent / "run")}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no keyring here: the secret commands must say so
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env, input=stdin, timeout=60,
    )  # fmt: skip


def test_the_entry_point_adds_and_lists_as_a_real_process(data: Path) -> None:
    assert entry_point(data, "--version").stdout.startswith("domi-desktop ")
    added = entry_point(data, "schedule", "add", "x", "--cron", "0 9 * * *", "--", "true")
    assert added.returncode == 0 and added.stdout.strip() == "1", added.stderr
    listed = entry_point(data, "schedule", "list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)] == ["x"]
    refused = entry_point(data, "schedule", "show", "42")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr


def test_add_list_show_edit_enable_disable_rm(ok: Callable[..., Any]) -> None:
    assert ok("schedule", "add", "Rate-limit report", "--cron", "0 9 * * 1-5", "--tz", "Europe/Riga",
              "--env", "ENDPOINT=/login", "--secret-env", "TOKEN=api-token", "--json",
              "--", "report", "--endpoint", "/login") == {"id": 1}  # fmt: skip
    assert (
        ok(
            "schedule",
            "add",
            "ping",
            "--cron",
            "*/5 * * * *",
            "--http",
            "https://example.com/health",
        ).strip()
        == "2"
    )
    listed = ok("schedule", "list", "--json")
    assert [sorted(s) for s in listed] == [
        sorted(["id", "name", "expr", "tz", "enabled", "last_due", "next_run", "notes"])
    ] * 2
    assert listed[0]["expr"] == "0 9 * * 1-5" and listed[0]["tz"] == "Europe/Riga"
    assert listed[0]["next_run"].endswith(("+02:00", "+03:00"))
    shown = ok("schedule", "show", "1", "--json")
    assert shown["action"]["argv"] == ["report", "--endpoint", "/login"]
    assert shown["action"]["secret_env"] == {"TOKEN": "api-token"}
    assert shown["description"] == "At 09:00, Monday through Friday"
    edited = ok("schedule", "edit", "1", "--cron", "30 8 * * 1-5", "--overlap", "queue", "--json")
    assert edited["expr"] == "30 8 * * 1-5" and edited["policies"]["overlap"] == "queue"
    assert edited["last_due"] > shown["last_due"]  # a new time starts from now
    assert ok("schedule", "disable", "1", "--json")["enabled"] is False
    assert ok("schedule", "enable", "1", "--json")["enabled"] is True
    ok("schedule", "rm", "2")
    assert [s["id"] for s in ok("schedule", "list", "--json")] == [1]


@pytest.mark.posix_only  # a POSIX shell line ($PWD)
def test_run_now_runs_here_records_a_manual_run_and_exits_with_the_outcome(
    run: Run, ok: Callable[..., Any], tmp_path: Path
) -> None:
    ok("schedule", "add", "hello", "--cron", "0 9 * * *", "--cwd", str(tmp_path),
       "--shell", "--", "echo hello from $PWD")  # fmt: skip
    ok(
        "schedule",
        "add",
        "fails",
        "--cron",
        "0 9 * * *",
        "--",
        sys.executable,
        "-c",
        "raise SystemExit(4)",
    )
    done = run("run-now", "1")
    assert done.returncode == 0 and done.stdout.strip() == f"hello from {tmp_path}"
    logged = done.stderr.strip().rpartition("; log: ")[2]
    assert Path(logged).read_text() == f"hello from {tmp_path}\n"
    failed = run("run-now", "2")
    assert failed.returncode == 1
    assert Path(failed.stderr.strip().rpartition("; log: ")[2]).read_text() == (
        "[domi-desktop] exit code 4\n"
    )
    runs = ok("runs", "--json")
    assert [r["status"] for r in runs] == ["failed", "succeeded"]  # newest first
    keys = {"id", "schedule_id", "due", "fired_at", "started_at", "finished_at", "status", "reason",
            "trigger", "late", "missed_count", "exit_code", "output_tail", "resumed_from"}  # fmt: skip
    assert keys <= set(runs[0])
    assert (
        runs[0]["trigger"] == "manual"
        and runs[0]["exit_code"] == 4
        and runs[0]["reason"] == "exit code 4"
    )
    assert [r["id"] for r in ok("runs", "--schedule", "1", "--json")] == [runs[1]["id"]]
    assert [r["status"] for r in ok("runs", "--status", "failed", "--limit", "5", "--json")] == [
        "failed"
    ]
    ok("schedule", "add", "quiet", "--cron", "0 9 * * *", "--", "true")
    quiet = run("run-now", "3")
    assert quiet.returncode == 0
    assert quiet.stderr.strip().endswith("run 3: succeeded; log: none, nothing was printed")


def test_simulate_json_is_the_seeds_demo(ok: Callable[..., Any], data: Path) -> None:
    out = ok("simulate", "0 9 * * *", "--tz", "Europe/Riga", "--last-due", "2024-06-04T09:00",
             "--wake", "2024-06-05T08:30", "--wake", "2024-06-05T09:00:30", "--wake", "2024-06-05T10:00",
             "--wake", "2024-06-08T10:00", "--json")  # fmt: skip
    wakes = out["wakes"]
    assert [w["fire"] for w in wakes] == [False, True, False, True]
    assert wakes[0] == {"at": "2024-06-05T08:30:00+03:00", "fire": False, "due": None, "late": False,
                        "trigger": None, "skipped": [], "missed_count": 0,
                        "wake_machine_at": None, "waited": None}  # fmt: skip
    assert wakes[1]["due"] == "2024-06-05T09:00:00+03:00" and not wakes[1]["late"]
    assert wakes[1]["trigger"] == "scheduled"
    assert wakes[3]["late"] and wakes[3]["trigger"] == "catch_up" and wakes[3]["missed_count"] == 2
    assert wakes[3]["skipped"] == ["2024-06-06T09:00:00+03:00", "2024-06-07T09:00:00+03:00"]
    assert not (data / "domi.sqlite3").exists(), "simulate needs no database"


def test_simulate_plays_the_disk_away_until_a_moment(run: Run, ok: Callable[..., Any]) -> None:
    week = ("simulate", "0 9 * * *", "--tz", "UTC", "--last-due", "2024-06-04T09:00",
            "--wake", "2024-06-05T09:00:30", "--volume", "Backup")  # fmt: skip
    done = run(*week, "--away-until", "2024-06-05T10:00")
    assert done.returncode == 0
    assert done.stdout.splitlines()[1] == (
        "  woke Wed 2024-06-05 09:00:30: fires for Wed 09:00, on time; "
        "waiting for the disk Backup until Wed 10:00, then runs once"
    )
    (wake,) = ok(*week, "--wait-at-most", "1800", "--on-deadline", "skip", "--json")["wakes"]
    assert wake["waited"] == {
        "reason": "waiting for the disk Backup",
        "until": "2024-06-05T09:30:00+00:00",
        "then": "skip",
        "outcome": "skipped after waiting 30 minutes for the disk Backup",
    }
    (never,) = ok(*week, "--json")["wakes"]
    assert never["waited"]["until"] is None and never["waited"]["then"] == "wait"


def test_import_crontab_creates_schedules_and_warns_about_the_traps(
    run: Run, ok: Callable[..., Any], data: Path, tmp_path: Path
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_text(
        "SHELL=/bin/sh\nPATH=/usr/bin:/bin\n*/15 * * * * /usr/local/bin/sync.sh\n"
        "0 3 * * * root /usr/sbin/backup\n30 8 * * 1-5 date +%Y >> /tmp/days\n61 * * * * broken\n"
    )
    dry = run("import-crontab", str(crontab), "--dry-run")
    assert dry.returncode == 0
    assert "'root' would be run as a command" in dry.stderr
    assert "this % ends the command" in dry.stderr
    assert "minute: 61 is out of range 0-59" in dry.stderr and f"{crontab}:6:1" in dry.stderr
    assert not (data / "domi.sqlite3").exists()
    done = run("import-crontab", str(crontab), "--disabled", "--json")
    assert done.returncode == 0
    assert len(json.loads(done.stdout)["imported"]) == 3
    listed = ok("schedule", "list", "--json")
    assert [s["expr"] for s in listed] == ["*/15 * * * *", "0 3 * * *", "30 8 * * 1-5"]
    assert not any(s["enabled"] for s in listed)
    date_job = ok("schedule", "show", "3", "--json")["action"]
    assert date_job["shell"] == "date +" and date_job["stdin"] == "Y >> /tmp/days\n"
    assert date_job["env"] == {"SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
    system = tmp_path / "system"
    system.write_text("17 * * * * root cd / && run-parts --report /etc/cron.hourly\n")
    out = json.loads(run("import-crontab", str(system), "--system", "--dry-run", "--json").stdout)
    assert out["planned"][0]["action"]["shell"] == "cd / && run-parts --report /etc/cron.hourly"


@pytest.mark.linux_only  # Windows and macOS always have their keyring
def test_secret_commands_without_a_keyring_say_so_clearly(data: Path) -> None:
    # A process of its own: keyring picks its backend once per process, at first use.
    stored = entry_point(data, "secret", "set", "api-token", stdin="hunter2-value\n")
    assert stored.returncode == 2 and "keyring" in stored.stderr.lower()
    assert "hunter2" not in stored.stderr + stored.stdout
    listed = entry_point(data, "secret", "list")
    assert listed.returncode == 2 and "keyring" in listed.stderr.lower()


@pytest.mark.parametrize(
    "args",
    [
        ["schedule", "show", "42"],
        ["schedule", "rm", "42"],
        ["schedule", "add", "x", "--cron", "61 * * * *", "--", "true"],
        ["schedule", "add", "x", "--cron", "0 9 * * *", "--tz", "Mars/Olympus", "--", "true"],
        ["schedule", "add", "x", "--cron", "0 9 * * *", "--env", "NOEQUALS", "--", "true"],
        ["schedule", "add", "x", "--cron", "0 9 * * *"],
        ["schedule", "add", "x", "--cron", "0 9 * * *", "--http", "ftp://example.com"],
        ["schedule", "add", "", "--cron", "0 9 * * *", "--", "true"],
        ["runs", "--status", "exploded"],
        ["runs", "--schedule", "42"],
        ["run-now", "42"],
        ["import-crontab", "/no/such/file"],
        ["simulate", "0 9 * * *", "--last-due", "noon", "--wake", "2024-06-05T10:00"],
        [
            "simulate",
            "0 9 * * *",
            "--tz",
            "Nowhere",
            "--last-due",
            "2024-06-05T10:00",
            "--wake",
            "2024-06-05T10:00",
        ],
        ["preview", "0 9 * * *", "--", "true"],
    ],
)
def test_every_bad_input_is_one_line_and_exit_2(bad: Callable[..., str], args: list[str]) -> None:
    message = bad(*args)
    assert len([line for line in message.splitlines() if line.startswith("domi-desktop")]) >= 1


def test_a_bad_expression_in_schedule_add_gets_its_caret(bad: Callable[..., str]) -> None:
    message = bad("schedule", "add", "x", "--cron", "0 25 * * *", "--", "true")
    assert message.splitlines()[-2:] == ["  0 25 * * *", "    ^^"]
