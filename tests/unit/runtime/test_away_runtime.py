"""When I step away, at the runtime: a real job on a fake clock and a fake session; paused where
it is when the user comes back (every process of its tree ``T``), let go on at the next away."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import psutil
import pytest

from domi_desktop.model import CommandAction, Conditions, OnReturn, RunStatus, SystemState
from tests.support.runtime import RuntimeHarness
from tests.unit.runtime.test_conditions_runtime import cmd, make, store

__all__ = ["make", "store"]  # the fixtures, shared with the conditions' tests

pytestmark = pytest.mark.posix_only

MIN = timedelta(minutes=1)


def at_computer(idle: timedelta = timedelta(0)) -> SystemState:
    return SystemState(idle=idle)


def tree_states(pid: int) -> set[str]:
    root = psutil.Process(pid)
    found = set()
    for process in [root, *root.children(recursive=True)]:
        found.add(Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0])
    return found


JOB = """
import pathlib, subprocess, sys, time
here = pathlib.Path(sys.argv[1])
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
(here / "started").write_text(str(child.pid))
while not (here / "go").exists():
    time.sleep(0.02)
child.kill()
print("done")
"""


def test_it_waits_for_the_user_to_step_away_and_pauses_while_they_are_back(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(at_computer())
    script = tmp_path / "job.py"
    script.write_text(JOB)
    action = CommandAction(argv=(sys.executable, str(script), str(tmp_path)))
    job = h.add("0 * * * *", action, conditions=Conditions(away=10 * MIN))
    h.runtime.start()
    h.loop.advance(timedelta(minutes=70))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting and run.reason == "waiting for you to step away"
    # Idle for 4 minutes by 11:10: away at 11:16, when time alone says so.
    h.source.change(at_computer(4 * MIN))
    h.loop.advance(timedelta(minutes=5))
    assert h.store.get_run(run.id).status is RunStatus.waiting
    h.source.state = at_computer(10 * MIN)
    h.loop.advance(timedelta(minutes=1))
    h.drain_until((tmp_path / "started").exists)
    assert h.store.get_run(run.id).status is RunStatus.running
    running = h.runtime.lanes.holding(run.id)
    assert running is not None and running.handle is not None and running.handle.pid is not None
    job_pid = running.handle.pid
    h.source.state = at_computer()  # back at the computer
    h.loop.advance(timedelta(seconds=0.5))
    h.drain_until(lambda: tree_states(job_pid) == {"T"})
    h.loop.advance(timedelta(minutes=3))
    assert tree_states(job_pid) == {"T"}
    h.source.state = at_computer(10 * MIN)  # away again
    h.loop.advance(timedelta(seconds=0.5))
    h.drain_until(lambda: "T" not in tree_states(job_pid))
    (tmp_path / "go").touch()
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    ended = h.store.get_run(run.id)
    assert ended.status is RunStatus.succeeded
    assert ended.reason is not None
    assert ended.reason.startswith("started after waiting 16 minutes")
    assert ended.reason.endswith("for you to step away; paused once, 3 min")


def test_stop_on_return_stops_it_and_one_run_waits_for_the_next_away(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(at_computer(30 * MIN))
    started = tmp_path / "started"
    action = cmd(f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(300)")
    conditions = Conditions(away=10 * MIN, on_return=OnReturn.stop)
    job = h.add("0 * * * *", action, conditions=conditions)
    h.runtime.start()
    h.loop.advance(timedelta(minutes=60))
    h.drain_until(started.exists)
    h.source.state = at_computer()
    h.loop.advance(timedelta(seconds=0.5))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    first, again = sorted(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert first.status is RunStatus.interrupted
    assert first.reason == "stopped: you came back to the computer"
    assert again.status is RunStatus.waiting and again.resumed_from == first.id
    assert again.reason == "waiting for you to step away"


@pytest.mark.parametrize("on_return", [OnReturn.pause, OnReturn.stop])
def test_a_user_who_never_leaves_gets_one_run_at_the_deadline_left_to_finish(
    make: Callable[..., RuntimeHarness], tmp_path: Path, on_return: OnReturn
) -> None:
    h = make(at_computer())  # typing all along: never away
    started, go = tmp_path / "started", tmp_path / "go"
    action = cmd(
        f"import pathlib, time; pathlib.Path({str(started)!r}).touch()\n"
        f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.02)\nprint('done')"
    )
    conditions = Conditions(away=10 * MIN, on_return=on_return, wait_at_most=20 * MIN)
    job = h.add("0 * * * *", action, conditions=conditions)
    h.runtime.start()
    h.loop.advance(timedelta(minutes=79))
    assert not started.exists()
    h.loop.advance(timedelta(minutes=1))  # 11:20, the deadline of the 11:00 due
    h.drain_until(started.exists)
    h.loop.advance(timedelta(seconds=30))  # the user is still there: it runs on
    go.touch()
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    h.loop.advance(timedelta(minutes=30))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.succeeded, run
    assert run.started_at is not None and run.due is not None
    assert run.started_at - run.due == 20 * MIN
    assert run.reason == "ran anyway after waiting 20 minutes for you to step away"
