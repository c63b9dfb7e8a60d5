"""``schedule show`` speaks to people: times on the local clock as ``list`` shows them, the
policies in words; a schedule that only its session's moments run (an imported ``@reboot``, the
editor's "Only then, not by its time") says so in ``list``, ``show`` and ``--json``, never as
``@yearly`` next run on 1 January."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.unit.cli import test_commands as test_cli_commands
from tests.unit.cli.test_commands import Run

data, run, ok = test_cli_commands.data, test_cli_commands.run, test_cli_commands.ok


def field(shown: str, label: str) -> str:
    """The value of ``label`` in ``schedule show``'s output."""
    (line,) = [line for line in shown.splitlines() if line.strip().startswith(f"{label}: ")]
    return line.split(": ", 1)[1]


def test_show_gives_times_as_list_does_and_policies_in_words(ok: Callable[..., Any]) -> None:
    ok("schedule", "add", "backup", "--cron", "0 9 * * 1-5", "--tz", "Pacific/Auckland",
       "--overlap", "queue", "--timeout", "90", "--retries", "2", "--volume", "LABEL=Backup",
       "--wait-at-most", "3600", "--on-deadline", "skip", "--at-unlock", "--min-interval",
       "7200", "--", "true")  # fmt: skip
    shown = ok("schedule", "show", "1")
    listed = ok("schedule", "list").splitlines()[1]
    assert listed.endswith("  " + field(shown, "next"))
    assert field(shown, "next").endswith(" 09:00 Auckland)")
    assert "Auckland)" in field(shown, "last due")
    assert field(shown, "overlap") == "queue"
    assert field(shown, "catch-up") == "latest"
    assert field(shown, "timeout") == "1 minute 30 seconds"
    assert field(shown, "retries").startswith("2, the first after 30 seconds")
    assert field(shown, "waits for") == "the disk Backup; at most 1 hour, then skips the run"
    assert field(shown, "moments") == "also at unlock, at most once every 2 hours"
    assert "{" not in shown and "policies" not in shown
    edited = ok("schedule", "edit", "1", "--notes", "call Ann")
    assert edited.endswith("      notes: call Ann\n")
    assert edited == ok("schedule", "show", "1")


def test_a_reboot_line_shows_as_run_only_at_login_everywhere(
    run: Run, ok: Callable[..., Any], tmp_path: Path
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_text("@reboot /usr/local/bin/start-agent\n")
    assert run("import-crontab", str(crontab)).returncode == 0
    _, row = ok("schedule", "list").splitlines()
    assert re.split(r"\s{2,}", row) == ["1", "start-agent (line 1)", "only at login", "local",
                                        "yes", "at login"]  # fmt: skip
    shown = ok("schedule", "show", "1")
    assert field(shown, "when") == "only at login (not by its time)"
    assert field(shown, "next") == "at login"
    assert "01-01" not in shown and "January" not in shown
    (listed,) = ok("schedule", "list", "--json")
    assert listed["next_run"] is None
    assert ok("schedule", "disable", "1").strip() == "schedule 1 disabled; next: -"
    assert ok("schedule", "enable", "1").strip() == "schedule 1 enabled; next: at login"
