"""Conditions and triggers at the command line: a disk, a network name and a path as conditions, the session
triggers, and a crontab's @reboot imported as at login (no app running: the store directly)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def cli(data: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMI_")}
    env.update(DOMI_DATA_DIR=str(data), XDG_RUNTIME_DIR=str(data), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode == 0) is ok, done.stderr
    return done


def policies(data: Path, schedule: int) -> Any:
    shown = json.loads(cli(data, "schedule", "show", str(schedule), "--json").stdout)
    return shown["policies"]


def test_resources_and_triggers_are_set_and_changed_one_by_one(tmp_path: Path) -> None:
    added = cli(
        tmp_path, "schedule", "add", "backup", "--cron", "@daily", "--volume", "UUID=1234-ABCD",
        "--path-exists", "/mnt/nas/ready", "--stop-if-lost", "--at-unlock", "--min-interval",
        "3600", "--json", "--", "true",
    )  # fmt: skip
    schedule = json.loads(added.stdout)["id"]
    shown = policies(tmp_path, schedule)
    assert shown["conditions"]["volume"] == "UUID=1234-ABCD"
    assert shown["conditions"]["path_exists"] == "/mnt/nas/ready"
    assert shown["session"]["at_unlock"] is True and shown["session"]["min_interval"] == 3600
    cli(tmp_path, "schedule", "edit", str(schedule), "--network-name", "office", "--no-at-unlock",
        "--before-sleep", "--volume", "")  # fmt: skip
    shown = policies(tmp_path, schedule)
    assert "volume" not in shown["conditions"]
    assert shown["conditions"]["network_name"] == "office"
    assert shown["conditions"]["path_exists"] == "/mnt/nas/ready"
    assert (shown["session"]["at_unlock"], shown["session"]["before_sleep"]) == (False, True)


def test_a_bad_path_is_refused_with_where_and_why(tmp_path: Path) -> None:
    done = cli(tmp_path, "schedule", "add", "x", "--cron", "@daily", "--path-exists", "nas/ready",
               "--", "true", ok=False)  # fmt: skip
    assert "policies.conditions.path_exists: must be an absolute path, not 'nas/ready'" in (
        done.stderr
    )


def test_reboot_in_a_crontab_is_imported_to_run_at_login_only(tmp_path: Path) -> None:
    table = tmp_path / "crontab"
    table.write_text("@reboot /usr/local/bin/start-agent\n0 9 * * * /usr/bin/report\n")
    done = cli(tmp_path, "import-crontab", str(table), "--json")
    assert "1:1: warning: @reboot runs when cron starts; imported as 'at login'" in done.stderr
    first, second = json.loads(done.stdout)["imported"]
    assert policies(tmp_path, first)["session"]["at_login"] is True
    assert policies(tmp_path, first)["session"]["only"] is True
    assert "session" not in policies(tmp_path, second)
