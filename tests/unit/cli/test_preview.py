from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from domi_desktop import __version__
from domi_desktop.cli import main


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_preview_json_gives_the_issues_new_york_example() -> None:
    done = cli(
        "preview", "30 2 * * *", "--tz", "America/New_York", "-n", "3",
        "--after", "2024-03-09T12:00:00-05:00", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == {
        "expr": "30 2 * * *",
        "tz": "America/New_York",
        "description": out["description"],
        "next": [
            "2024-03-10T03:00:00-04:00",
            "2024-03-11T02:30:00-04:00",
            "2024-03-12T02:30:00-04:00",
        ],
    }
    assert "02:30" in out["description"]


def test_preview_human_output_marks_dst_days_and_shows_the_os_zone_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Riga")
    code = main(
        ["preview", "30 2 * * *", "--tz", "America/New_York", "-n", "2",
         "--after", "2024-03-09T12:00:00-05:00"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "At 02:30, every day"
    assert "  Sun 2024-03-10 03:00 -04:00 EDT  ← DST change this day" in lines
    assert "  Mon 2024-03-11 02:30 -04:00 EDT" in lines
    assert "The same in your zone (Europe/Riga):" in out
    assert "  Sun 2024-03-10 09:00 +02:00 EET" in lines


def test_preview_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["preview", "0 9 * * 1-5", "--tz", "Asia/Shanghai", "--lang", "zh", "-n", "1"])
    assert code == 0
    assert capsys.readouterr().out.splitlines()[0] == "周一至周五 09:00"


def test_a_bad_expression_prints_a_caret_under_the_span_and_exits_2() -> None:
    done = cli("preview", "0 9 * * mon-fri,8", "--tz", "UTC")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "domi-desktop: day-of-week: 8 is out of range 0-7 (0 and 7 are Sunday)",
        "  0 9 * * mon-fri,8",
        "                  ^",
    ]
    assert done.stdout == ""


def test_an_unknown_zone_exits_2_without_a_traceback() -> None:
    done = cli("preview", "0 9 * * *", "--tz", "Mars/Olympus")
    assert done.returncode == 2
    assert "unknown time zone 'Mars/Olympus'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["preview", "0 9 * * *", "--after", "yesterday"],
        ["preview", "0 9 * * *", "-n", "0"],
        ["preview", "0 9 * * *", "-n", "many"],
        ["preview", "\x01 * * * *"],
        ["preview", "@reboot"],
        ["frobnicate"],
    ],
)
def test_bad_input_is_one_clear_error_and_exit_2(args: list[str]) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"domi-desktop {__version__}"
