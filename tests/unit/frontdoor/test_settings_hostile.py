"""A hostile settings.json (a number of thousands of digits, arrays nested 100,000 deep, a lone
surrogate, a huge value in a field) never stops the app or a command: each ignored setting is said
in one line, and the rest of the file still counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakes import wait_for
from tests.support.processes import killed_if_unready, stop

HUGE = "1" + "0" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def _env(data: Path) -> dict[str, str]:
    runtime = data.parent / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {**os.environ, "DOMI_DATA_DIR": str(data), "XDG_RUNTIME_DIR": str(runtime),
            "QT_QPA_PLATFORM": "offscreen",
            "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={data}/no-such-bus"}  # fmt: skip


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, encoding="utf-8", env=_env(data), timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (f'{{"heartbeat_hours": {HUGE}}}', "cannot be read"),
        (f'{{"language": "zh", "x": {DEEP}}}', "cannot be read"),
        ('{"healthchecks_key": "\\udc80", "heartbeat_hours": 5}', "healthchecks_key = '\\udc80'"),
        ('{"heartbeat_url": "\\ud800", "heartbeat_hours": 5}', "heartbeat_url = '\\ud800'"),
        (f'{{"heartbeat_hours": {"9" * 300}}}', "heartbeat_hours = 999"),
    ],
    ids=["huge-number", "deep-array", "surrogate-key", "surrogate-url", "huge-field"],
)
def test_a_hostile_setting_is_ignored_in_one_line_and_the_command_runs(
    tmp_path: Path, text: str, said: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(text, encoding="utf-8")
    done = _cli(data, "monitor", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert said in line and len(line) < 300
    if 'heartbeat_hours": 5' in text:
        assert json.loads(done.stdout)["heartbeat"]["hours"] == 5  # the rest of the file counts


@pytest.mark.slow
def test_the_app_starts_and_answers_with_hostile_settings(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(
        json.dumps({"alert_cooldown_hours": int("9" * 300), "alert_stale_after_hours": 10**30,
                    "healthchecks_key": "\udc80", "heartbeat_url": "\ud800",
                    "heartbeat_hours": 10**40, "catch_up_burst": 10**20}),
        encoding="utf-8",
    )  # fmt: skip
    with (tmp_path / "daemon.stderr").open("ab") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=_env(data), stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        with killed_if_unready(daemon):
            wait_for(lambda: _cli(data, "status", "--json").returncode == 0, 60, "the app")
        added = _cli(data, "schedule", "add", "job", "--cron", "* * * * *", "--", "true")
        assert added.returncode == 0, added.stderr
    finally:
        assert stop(daemon) == 0
    log = (tmp_path / "daemon.stderr").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log
    for name in ("alert_cooldown_hours", "healthchecks_key", "heartbeat_url", "heartbeat_hours"):
        assert f"{name} = " in log
