"""The OS's log of sleeps read by its real tool: journalctl on a real journal file (written by
systemd-journal-remote from the fixture's entries). pmset and wevtutil are absent here: their
parsers are tested on fixtures (tests/unit/story), and their runner says None without them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from domi_desktop.platform.sleeplog import (
    boot_clock,
    event_log_command,
    journal_command,
    read_os_sleeps,
)
from domi_desktop.story import SpanSource
from tests.unit.story.test_oslog import JOURNAL_SLEEPS

FIXTURE = Path(__file__).parents[1] / "story" / "fixtures" / "journal.jsonl"
JOURNAL_REMOTE = Path("/lib/systemd/systemd-journal-remote")


needs_journal = pytest.mark.skipif(
    shutil.which("journalctl") is None or not JOURNAL_REMOTE.exists(),
    reason="needs journalctl and systemd-journal-remote (make system-deps)",
)


def journal_file(directory: Path) -> Path:
    """The fixture's readable entries as a real journal file (export format -> journal)."""
    export = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
            int(entry["__REALTIME_TIMESTAMP"])
        except (ValueError, KeyError):
            continue
        export.append(
            "".join(f"{key}={value}\n" for key, value in entry.items() if "\n" not in value)
        )
    source = directory / "entries.export"
    source.write_text("\n".join(export) + "\n", encoding="utf-8")
    target = directory / "sleep.journal"
    subprocess.run(
        [str(JOURNAL_REMOTE), f"--output={target}", str(source)], check=True, capture_output=True
    )
    return target


@pytest.mark.linux_only
@needs_journal
def test_journalctl_finds_the_sleeps_in_a_real_journal(tmp_path: Path) -> None:
    journal = journal_file(tmp_path)

    found = read_os_sleeps(datetime(2026, 11, 1, tzinfo=UTC), journal_files=[journal])

    assert found is not None
    source, parsed = found
    assert source is SpanSource.journal
    assert parsed.sleeps == JOURNAL_SLEEPS  # as the parser reads the fixture's text


@pytest.mark.linux_only
@needs_journal
def test_journalctl_leaves_out_what_came_before_since(tmp_path: Path) -> None:
    journal = journal_file(tmp_path)
    found = read_os_sleeps(datetime(2026, 12, 1, 12, 0, tzinfo=UTC), journal_files=[journal])
    assert found is not None
    assert [sleep.start.hour for sleep in found[1].sleeps] == [12]


def test_an_os_without_a_sleep_log_or_its_tool_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    since = datetime(2026, 11, 1, tzinfo=UTC)
    assert read_os_sleeps(since, platform="freebsd14") is None
    monkeypatch.setenv("PATH", "")
    assert read_os_sleeps(since, platform="darwin") is None
    assert read_os_sleeps(since, platform="win32") is None


def test_the_commands_ask_only_for_the_sleep_events() -> None:
    argv = journal_command(datetime(2026, 11, 1, tzinfo=UTC))
    assert argv[-2:] == [
        "MESSAGE_ID=6bbd95ee977941e497c48be27c254128",
        "MESSAGE_ID=8811e6df2a8e40f58a94cea26f8ebf14",
    ]
    assert "--since=@1793491200" in argv
    query = event_log_command()[3]
    assert (
        "Microsoft-Windows-Kernel-Power" in query
        and "EventID=42" in query
        and "EventID=107" in query
    )


def test_the_boot_clock_is_linuxs_and_counts_what_the_monotonic_one_leaves_out() -> None:
    assert boot_clock("win32") is None and boot_clock("darwin") is None
    clock = boot_clock()
    if sys.platform != "linux":
        assert clock is None
        return
    assert clock is not None
    # CLOCK_BOOTTIME is CLOCK_MONOTONIC plus the time spent asleep: never behind it.
    awake = time.monotonic()
    assert clock() >= awake
