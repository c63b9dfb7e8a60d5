"""Output piped into a reader that stops early (``domi-desktop schedule show 1 | head -1``) ends
quietly: no BrokenPipeError traceback, neither from the command nor from the flush at exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.cli import test_commands as test_cli_commands
from tests.unit.cli.test_commands import Run

data, run = test_cli_commands.data, test_cli_commands.run


def into_a_closed_pipe(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point writing into a pipe nobody reads any more: its first write fails,
    as the write after ``head -1`` has read its line does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMI_")}
    env.update(DOMI_DATA_DIR=str(data), XDG_RUNTIME_DIR=str(data.parent / "run"))
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "domi_desktop", *args],
            stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write)


@pytest.fixture
def one_schedule(run: Run, data: Path) -> Path:
    added = run("schedule", "add", "report", "--cron", "0 9 * * *", "--", "true")
    assert added.returncode == 0, added.stderr
    return data


@pytest.mark.posix_only  # Windows tells a closed pipe as EINVAL, not as a broken pipe
@pytest.mark.parametrize(
    "args",
    [
        ["schedule", "show", "1"],
        ["schedule", "list"],
        ["timeline"],
        ["status"],
        ["runs", "--json"],
        ["preview", "*/5 * * * *"],
    ],
    ids=" ".join,
)
def test_a_reader_that_stops_early_gets_no_traceback(one_schedule: Path, args: list[str]) -> None:
    done = into_a_closed_pipe(one_schedule, *args)
    assert done.stderr == ""
    assert done.returncode == 1
