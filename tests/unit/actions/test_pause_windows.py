"""A job's tree paused on Windows for real: every process suspended (``NtSuspendProcess``), its
count standing still, then resumed to the end; its timeout counting only the time it ran."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from domi_desktop.actions import ActionRunner
from domi_desktop.model import CommandAction, RunStatus
from tests.unit.actions.conftest import MakeRequest

pytestmark = pytest.mark.windows_only

COUNTS = """\
import subprocess, sys, time
from pathlib import Path
here = Path(sys.argv[1])
if len(sys.argv) == 2:
    child = subprocess.Popen([sys.executable, __file__, str(here), "child"])
name = "child" if len(sys.argv) > 2 else "parent"
for i in range(40):
    (here / name).write_text(str(i))
    time.sleep(0.05)
if name == "parent":
    child.wait()
"""


def wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def ignore(_: object) -> None:
    pass


def test_pause_suspends_every_process_and_resume_lets_the_job_finish(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    script = tmp_path / "counts.py"
    script.write_text(COUNTS)
    job = runner.start(
        make_request(CommandAction(argv=(sys.executable, str(script), str(tmp_path))), timeout=60),
        ignore,
    )
    wait_for(lambda: (tmp_path / "parent").exists() and (tmp_path / "child").exists())
    assert job.pause(True)
    time.sleep(0.5)  # a write in flight lands
    counted = {name: (tmp_path / name).read_text() for name in ("parent", "child")}
    time.sleep(1.5)
    assert {name: (tmp_path / name).read_text() for name in counted} == counted
    assert job.pause(False)
    result = job.wait(120)
    assert result is not None and result.status is RunStatus.succeeded, result
    assert (tmp_path / "parent").read_text() == "39" == (tmp_path / "child").read_text()
