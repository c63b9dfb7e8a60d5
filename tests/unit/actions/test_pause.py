"""A job's whole tree paused where it is (every process stopped, ``T`` in /proc) and let go on;
its output the same as an unpaused run's; its timeout counting only the time it ran."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.actions.pause import RunningClock
from domi_desktop.model import CommandAction, RunStatus

pytestmark = pytest.mark.posix_only  # /proc and signals

MakeRequest = Callable[..., ActionRequest]
WaitUntil = Callable[[Callable[[], bool]], None]

# A parent, a child in its group and a grandchild in a session of its own, each counting to 30.
COUNTING = """
import subprocess, sys, time
from pathlib import Path
here = Path(sys.argv[1])
if len(sys.argv) > 2:
    name = sys.argv[2]
else:
    name = "parent"
    children = [
        subprocess.Popen([sys.executable, __file__, str(here), "child"]),
        subprocess.Popen([sys.executable, __file__, str(here), "loner"], start_new_session=True),
    ]
for i in range(30):
    with (here / name).open("a") as out:
        out.write(f"{i}\\n")
    time.sleep(0.05)
if name == "parent":
    for child in children:
        child.wait()
print(name, "counted", flush=True)
"""


def NOTHING(_: object) -> None:
    pass


def states(pid: int) -> dict[int, str]:
    """The state letter of each process of the tree, as /proc/PID/stat says it."""
    found: dict[int, str] = {}
    root = psutil.Process(pid)
    for process in [root, *root.children(recursive=True)]:
        stat = Path(f"/proc/{process.pid}/stat").read_text()
        found[process.pid] = stat.rsplit(")", 1)[1].split()[0]
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/PID/stat is Linux's")
def test_pause_stops_every_process_of_the_tree_and_resume_lets_them_finish_as_unpaused(
    runner: ActionRunner, make_request: MakeRequest, wait_until: WaitUntil, tmp_path: Path
) -> None:
    script = tmp_path / "count.py"
    script.write_text(COUNTING)
    paused_dir, plain_dir = tmp_path / "paused", tmp_path / "plain"
    paused_dir.mkdir()
    plain_dir.mkdir()
    job = runner.start(
        make_request(CommandAction(argv=(sys.executable, str(script), str(paused_dir)))), NOTHING
    )
    wait_until(lambda: all((paused_dir / n).exists() for n in ("parent", "child", "loner")))
    pid = job.pid
    assert pid is not None
    assert job.pause(True)
    wait_until(lambda: len(states(pid)) == 3 and set(states(pid).values()) == {"T"})
    counted = {n: (paused_dir / n).read_text() for n in ("parent", "child", "loner")}
    time.sleep(0.3)  # stopped: nothing counts meanwhile
    assert {n: (paused_dir / n).read_text() for n in counted} == counted
    assert job.pause(False)
    wait_until(lambda: "T" not in set(states(pid).values()) if psutil.pid_exists(pid) else True)
    result = job.wait(60)
    assert result is not None and result.status is RunStatus.succeeded
    plain = runner.start(
        make_request(CommandAction(argv=(sys.executable, str(script), str(plain_dir))), run_id=2),
        NOTHING,
    ).wait(60)
    assert plain is not None and plain.status is RunStatus.succeeded
    for name in ("parent", "child", "loner"):
        assert (paused_dir / name).read_text() == (plain_dir / name).read_text()
    assert sorted((result.output_tail or "").splitlines()) == sorted(
        (plain.output_tail or "").splitlines()
    )


def test_a_timeout_counts_only_the_time_the_job_ran(
    runner: ActionRunner, make_request: MakeRequest, wait_until: WaitUntil, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    action = CommandAction(shell=f"touch {started}; sleep 1; echo done", cwd=str(tmp_path))
    job = runner.start(make_request(action, timeout=3), NOTHING)
    wait_until(started.exists)
    assert job.pause(True)
    time.sleep(4)  # longer than the timeout, paused: it must not count
    assert job.wait(0) is None
    assert job.pause(False)
    result = job.wait(60)
    assert result is not None
    assert result.status is RunStatus.succeeded, result.reason
    assert result.output_tail == "done\n"


def test_a_paused_job_stopped_ends_interrupted(
    runner: ActionRunner, make_request: MakeRequest, wait_until: WaitUntil, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    job = runner.start(make_request(CommandAction(shell=f"touch {started}; sleep 300")), NOTHING)
    wait_until(started.exists)
    job.pause(True)
    job.stop("stopped: you came back")
    result = job.wait(60)
    assert result is not None and result.status is RunStatus.interrupted
    assert result.reason == "stopped: you came back"


def test_the_running_clock_leaves_out_the_pauses() -> None:
    clock = RunningClock(None)
    clock.pause()
    assert clock.paused and clock.resume() is None and not clock.paused
