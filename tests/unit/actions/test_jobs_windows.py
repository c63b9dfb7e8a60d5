"""Command jobs on Windows for real: cmd.exe, output, and the Job Object around the whole tree."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from domi_desktop.actions import ActionRunner
from domi_desktop.model import CommandAction, RunStatus
from tests.unit.actions.conftest import MakeRequest

pytestmark = pytest.mark.windows_only

# The child is started by the job's very first statement, racing its assignment to the Job Object
# (hence the job is started suspended, assigned, then resumed).
STARTS_A_CHILD_AT_ONCE = """\
import subprocess, sys, time
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
time.sleep(600)
"""


def wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def test_a_shell_job_runs_under_cmd_and_its_output_is_kept(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    result = runner.start(
        make_request(CommandAction(shell="echo one& echo two")), lambda _result: None
    ).wait(300)
    assert result is not None
    assert result.status is RunStatus.succeeded, result.reason
    assert result.output_tail.split() == ["one", "two"]


@pytest.mark.parametrize("how", ["stop", "timeout"])
def test_a_child_started_at_once_ends_with_its_job(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path, how: str
) -> None:
    script, pid_file = tmp_path / "starts_a_child.py", tmp_path / "child.pid"
    script.write_text(STARTS_A_CHILD_AT_ONCE)
    action = CommandAction(argv=(sys.executable, str(script), str(pid_file)))
    request = make_request(action, timeout=30 if how == "timeout" else None)
    running = runner.start(request, lambda _result: None)
    wait_for(pid_file.exists)
    child = int(pid_file.read_text())
    assert psutil.pid_exists(child)
    if how == "stop":
        running.stop("stopped by the test")
    result = running.wait(300)
    assert result is not None
    expected = RunStatus.interrupted if how == "stop" else RunStatus.timed_out
    assert result.status is expected
    wait_for(lambda: not psutil.pid_exists(child))
