"""The CLI's exact shapes (issue: scheduler, store, actions, CLI), on a real data dir, no app running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def run(data: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no keyring here: the secret commands must say so
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env, input=stdin, timeout=60,
    )  # fmt: skip


def ok(data: Path, *args: str) -> Any:
    done = run(data, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def bad(data: Path, *args: str, stdin: str | None = None) -> str:
    done = run(data, *args, stdin=stdin)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()
    return done.stderr


def test_add_list_show_edit_enable_disable_rm(data: Path) -> None:
    assert ok(data, "schedule", "add", "Rate-limit report", "--cron", "0 9 * * 1-5", "--tz", "Europe/Riga",
              "--env", "ENDPOINT=/login", "--secret-env", "TOKEN=api-token", "--json",
              "--", "report", "--endpoint", "/login") == {"id": 1}  # fmt: skip
    assert (
        ok(
            data,
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
    listed = ok(data, "schedule", "list", "--json")
    assert [sorted(s) for s in listed] == [
        sorted(["id", "name", "expr", "tz", "enabled", "last_due", "next_run"])
    ] * 2
    assert listed[0]["expr"] == "0 9 * * 1-5" and listed[0]["tz"] == "Europe/Riga"
    assert listed[0]["next_run"].endswith(("+02:00", "+03:00"))
    shown = ok(data, "schedule", "show", "1", "--json")
    assert shown["action"]["argv"] == ["report", "--endpoint", "/login"]
    assert shown["action"]["secret_env"] == {"TOKEN": "api-token"}
    assert shown["description"] == "At 09:00, Monday through Friday"
    edited = ok(
        data, "schedule", "edit", "1", "--cron", "30 8 * * 1-5", "--overlap", "queue", "--json"
    )
    assert edited["expr"] == "30 8 * * 1-5" and edited["policies"]["overlap"] == "queue"
    assert edited["last_due"] > shown["last_due"]  # a new time starts from now
    assert ok(data, "schedule", "disable", "1", "--json")["enabled"] is False
    assert ok(data, "schedule", "enable", "1", "--json")["enabled"] is True
    ok(data, "schedule", "rm", "2")
    assert [s["id"] for s in ok(data, "schedule", "list", "--json")] == [1]


def test_run_now_runs_here_records_a_manual_run_and_exits_with_the_outcome(
    data: Path, tmp_path: Path
) -> None:
    ok(data, "schedule", "add", "hello", "--cron", "0 9 * * *", "--cwd", str(tmp_path),
       "--shell", "--", "echo hello from $PWD")  # fmt: skip
    ok(
        data,
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
    done = run(data, "run-now", "1")
    assert done.returncode == 0 and done.stdout.strip() == f"hello from {tmp_path}"
    assert run(data, "run-now", "2").returncode == 1
    runs = ok(data, "runs", "--json")
    assert [r["status"] for r in runs] == ["failed", "succeeded"]  # newest first
    keys = {"id", "schedule_id", "due", "fired_at", "started_at", "finished_at", "status", "reason",
            "trigger", "late", "missed_count", "exit_code", "output_tail", "resumed_from"}  # fmt: skip
    assert keys <= set(runs[0])
    assert (
        runs[0]["trigger"] == "manual"
        and runs[0]["exit_code"] == 4
        and runs[0]["reason"] == "exit code 4"
    )
    assert [r["id"] for r in ok(data, "runs", "--schedule", "1", "--json")] == [runs[1]["id"]]
    assert [
        r["status"] for r in ok(data, "runs", "--status", "failed", "--limit", "5", "--json")
    ] == ["failed"]


def test_simulate_json_is_the_seeds_demo(data: Path) -> None:
    out = ok(data, "simulate", "0 9 * * *", "--tz", "Europe/Riga", "--last-due", "2024-06-04T09:00",
             "--wake", "2024-06-05T08:30", "--wake", "2024-06-05T09:00:30", "--wake", "2024-06-05T10:00",
             "--wake", "2024-06-08T10:00", "--json")  # fmt: skip
    wakes = out["wakes"]
    assert [w["fire"] for w in wakes] == [False, True, False, True]
    assert wakes[0] == {"at": "2024-06-05T08:30:00+03:00", "fire": False, "due": None, "late": False,
                        "trigger": None, "skipped": [], "missed_count": 0}  # fmt: skip
    assert wakes[1]["due"] == "2024-06-05T09:00:00+03:00" and not wakes[1]["late"]
    assert wakes[1]["trigger"] == "scheduled"
    assert wakes[3]["late"] and wakes[3]["trigger"] == "catch_up" and wakes[3]["missed_count"] == 2
    assert wakes[3]["skipped"] == ["2024-06-06T09:00:00+03:00", "2024-06-07T09:00:00+03:00"]
    assert not (data / "domi.sqlite3").exists(), "simulate needs no database"


def test_import_crontab_creates_schedules_and_warns_about_the_traps(
    data: Path, tmp_path: Path
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_text(
        "SHELL=/bin/sh\nPATH=/usr/bin:/bin\n*/15 * * * * /usr/local/bin/sync.sh\n"
        "0 3 * * * root /usr/sbin/backup\n30 8 * * 1-5 date +%Y >> /tmp/days\n61 * * * * broken\n"
    )
    dry = run(data, "import-crontab", str(crontab), "--dry-run")
    assert dry.returncode == 0
    assert "'root' would be run as a command" in dry.stderr
    assert "this % ends the command" in dry.stderr
    assert "minute: 61 is out of range 0-59" in dry.stderr and f"{crontab}:6:1" in dry.stderr
    assert not (data / "domi.sqlite3").exists()
    done = run(data, "import-crontab", str(crontab), "--disabled", "--json")
    assert done.returncode == 0
    assert len(json.loads(done.stdout)["imported"]) == 3
    listed = ok(data, "schedule", "list", "--json")
    assert [s["expr"] for s in listed] == ["*/15 * * * *", "0 3 * * *", "30 8 * * 1-5"]
    assert not any(s["enabled"] for s in listed)
    date_job = ok(data, "schedule", "show", "3", "--json")["action"]
    assert date_job["shell"] == "date +" and date_job["stdin"] == "Y >> /tmp/days\n"
    assert date_job["env"] == {"SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
    system = tmp_path / "system"
    system.write_text("17 * * * * root cd / && run-parts --report /etc/cron.hourly\n")
    out = json.loads(
        run(data, "import-crontab", str(system), "--system", "--dry-run", "--json").stdout
    )
    assert out["planned"][0]["action"]["shell"] == "cd / && run-parts --report /etc/cron.hourly"


def test_secret_commands_without_a_keyring_say_so_clearly(data: Path) -> None:
    message = bad(data, "secret", "set", "api-token", stdin="hunter2-value\n")
    assert "keyring" in message.lower()
    assert "hunter2" not in message
    assert "keyring" in bad(data, "secret", "list").lower()


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
def test_every_bad_input_is_one_line_and_exit_2(data: Path, args: list[str]) -> None:
    message = bad(data, *args)
    assert len([line for line in message.splitlines() if line.startswith("domi-desktop")]) >= 1


def test_a_bad_expression_in_schedule_add_gets_its_caret(data: Path) -> None:
    message = bad(data, "schedule", "add", "x", "--cron", "0 25 * * *", "--", "true")
    assert message.splitlines()[-2:] == ["  0 25 * * *", "    ^^"]
