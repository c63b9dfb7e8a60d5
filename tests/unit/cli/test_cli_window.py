"""``--window`` and ``--at-window-end`` on the command line: stored, shown in words, read back as
given; a bad window named at its option; ``preview --window`` lists the nights with their real
lengths."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.unit.cli import test_commands as test_cli_commands
from tests.unit.cli.test_cli_schedule_words import field
from tests.unit.cli.test_preview import cli

data, run, ok, bad = (
    test_cli_commands.data, test_cli_commands.run, test_cli_commands.ok, test_cli_commands.bad,
)  # fmt: skip


def test_a_window_is_stored_shown_in_words_and_changed_by_edit(ok: Callable[..., Any]) -> None:
    ok("schedule", "add", "backup", "--cron", "@daily", "--tz", "Europe/Berlin",
       "--window", "22:00-06:00", "--on-ac-power", "--", "true")  # fmt: skip
    shown = ok("schedule", "show", "1")
    assert field(shown, "waits for") == (
        "the charger and the window 22:00-06:00 (once per period; when it ends unused, skips"
        " the run)"
    )
    ok("schedule", "edit", "1", "--at-window-end", "run")
    assert "runs then" in field(ok("schedule", "show", "1"), "waits for")
    ok("schedule", "edit", "1", "--window", "")
    assert field(ok("schedule", "show", "1"), "waits for") == "the charger"


def test_a_bad_window_is_named_at_its_option(bad: Callable[..., str]) -> None:
    said = bad("schedule", "add", "x", "--cron", "@daily", "--window", "22-6", "--", "true")
    assert said.strip() == "domi-desktop: --window: '22-6' is not HH:MM-HH:MM (e.g. 22:00-06:00)"


def test_preview_lists_the_next_windows_with_their_real_lengths() -> None:
    done = cli(
        "preview", "@daily", "--tz", "America/New_York", "-n", "2",
        "--after", "2026-10-30T12:00:00-04:00", "--window", "22:00-06:00", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    windows = json.loads(done.stdout)["windows"]
    assert windows == [
        {
            "due": "2026-10-31T00:00:00-04:00",
            "start": "2026-10-31T22:00:00-04:00",
            "end": "2026-11-01T06:00:00-05:00",
            "seconds": 9 * 3600,
        },
        {
            "due": "2026-11-01T00:00:00-04:00",
            "start": "2026-11-01T22:00:00-05:00",
            "end": "2026-11-02T06:00:00-05:00",
            "seconds": 8 * 3600,
        },
    ]
    text = cli(
        "preview", "@daily", "--tz", "America/New_York", "-n", "1",
        "--after", "2026-10-30T12:00:00-04:00", "--window", "22:00-06:00",
    ).stdout  # fmt: skip
    assert "(9 hours)  ← DST change this day" in text


def test_when_away_is_stored_in_seconds_and_shown_with_what_coming_back_does(
    ok: Callable[..., Any], bad: Callable[..., str]
) -> None:
    ok("schedule", "add", "index", "--cron", "@hourly", "--when-away", "10", "--on-return",
       "stop", "--", "true")  # fmt: skip
    assert field(ok("schedule", "show", "1"), "waits for") == (
        "you to step away for 10 minutes (when you come back, stops it)"
    )
    said = bad("schedule", "add", "y", "--cron", "@daily", "--when-away", "0", "--", "true")
    assert said.strip() == (
        "domi-desktop: --when-away: must be more than 0 minutes and at most a week (10080), not 0"
    )
