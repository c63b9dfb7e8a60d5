"""The warden stops the app's jobs when the app stops vouching for them (a shared store's lease)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import psutil
import pytest

from domi_desktop.actions import ActionRunner, identity, warden
from domi_desktop.model import WARDEN_STOPPED, CommandAction, RunStatus
from tests.support.fakes import wait_for
from tests.unit.actions.conftest import MakeRequest


def _killer(killed: list[int]) -> Callable[[int, str | None], bool]:
    def kill(pid: int, _marker: str | None) -> bool:
        killed.append(pid)
        return True

    return kill


class Script:
    """Lines as the app would write them, each read at a moment of a fake clock."""

    def __init__(self, steps: list[tuple[float, str | None]]) -> None:
        self.steps = steps
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def lines(self, _timeout: float) -> str | None:
        self.now, line = self.steps.pop(0)
        return line


def test_a_late_renewal_kills_what_is_watched_and_a_timely_one_never_does() -> None:
    killed: list[int] = []
    script = Script(
        [
            (0.0, "watch 11 m11"),
            (20.0, "held 60"),  # on time: a third of the lease
            (40.0, "held 55"),  # a renewal that took 5 s
            (40.0, "watch 12 -"),
            (60.0, "release 11"),
            (69.0, None),  # 29 s after the last renewal
            (81.0, None),  # 41 s: 14 s left on the lease, less than a quarter
            (90.0, "bye"),
        ]
    )
    why = warden.guard(script.lines, 60.0, _killer(killed), script.clock)
    assert (why, killed) == ("bye", [12])


def test_the_app_gone_kills_at_once_and_a_quit_leaves_the_jobs_to_the_app() -> None:
    for last, expected in (("", [7]), ("bye", [])):
        killed: list[int] = []
        script = Script([(0.0, "watch 7 m"), (1.0, last)])
        warden.guard(script.lines, 60.0, _killer(killed), script.clock)
        assert killed == expected


def test_a_lapse_kills_the_apps_tagged_processes_too() -> None:
    strays: list[str] = []

    def kill_strays() -> list[int]:
        strays.append("killed")
        return [99]

    script = Script([(0.0, "held 60"), (50.0, None), (51.0, "bye")])
    warden.guard(script.lines, 60.0, _killer([]), script.clock, kill_strays)
    assert strays == ["killed"]


def test_a_job_the_warden_was_never_told_of_is_found_by_its_tag() -> None:
    # The app froze between starting the job and telling the warden: the job's tag names it.
    token = identity.this_process().token
    env = {**os.environ, **identity.job_tags(7)}
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], env=env) as job:
        try:
            wait_for(lambda: token in psutil.Process(job.pid).environ().values(), 30, "its env")
            assert warden.kill_tagged(token) == [job.pid]
            assert job.wait(30) != 0
            assert warden.kill_tagged(token) == []
        finally:
            job.kill()


def test_nonsense_on_the_pipe_is_ignored() -> None:
    killed: list[int] = []
    script = Script(
        [(0.0, "watch x y"), (0.0, "release"), (0.0, "held soon"), (0.0, "held -5"), (100.0, "bye")]
    )
    assert warden.guard(script.lines, 1.0, _killer(killed), script.clock) == "bye"
    assert killed == []


def test_a_pid_now_given_to_another_process_is_left_alone() -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            assert not warden.kill_tree(other.pid, "not-its-marker")
            assert other.poll() is None
        finally:
            other.kill()


@pytest.fixture
def job() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time; "
         "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); time.sleep(120)"],
        start_new_session=sys.platform != "win32",
    )  # fmt: skip
    yield process
    warden.kill_tree(process.pid, None)
    process.wait(10)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


@pytest.mark.parametrize("ending", ["frozen", "killed"])
def test_the_warden_process_kills_a_job_tree_of_an_app_that_froze_or_died(
    job: subprocess.Popen[bytes], ending: str
) -> None:
    wait_for(lambda: len(_tree(job.pid)) == 2, 30, "the job and its child")
    tree = _tree(job.pid)
    lease = 2.0 if ending == "frozen" else 3600.0
    keeper = warden.Warden.start(lease)
    try:
        keeper.watch(job.pid)
        keeper.held(lease)
        if ending == "killed":
            keeper._process.stdin.close()  # type: ignore[union-attr]  # as when the app dies
        wait_for(lambda: job.poll() is not None, 60, "the warden to kill the job")
        wait_for(lambda: not any(_alive(process) for process in tree), 30, "the whole tree gone")
    finally:
        keeper.close()


def test_a_quitting_app_keeps_its_jobs(job: subprocess.Popen[bytes]) -> None:
    keeper = warden.Warden.start(lease=3600.0)
    keeper.watch(job.pid)
    keeper.held(3600.0)
    keeper.close()  # bye: the app stops its jobs itself, or leaves them on purpose
    assert keeper._process.returncode == 0
    assert job.poll() is None


@pytest.fixture
def sink() -> Iterator[subprocess.Popen[str]]:
    """A stand-in for the warden process: it reads the pipe and does nothing."""
    with subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, text=True
    ) as process:
        yield process  # the pipe's end (Popen's exit) ends it


def test_the_app_knows_which_jobs_the_warden_stopped(sink: subprocess.Popen[str]) -> None:
    now = [0.0]
    keeper = warden.Warden(sink, 60.0, clock=lambda: now[0])
    keeper.watch(11)
    keeper.held(60.0)
    now[0] = 20.0
    keeper.held(55.0)  # a renewal that took 5 s: the warden stops the jobs at 60
    keeper.watch(12)
    keeper.watch(13)
    keeper.release(13)
    now[0] = 59.0
    assert not any(keeper.stopped(pid) for pid in (11, 12, 13))
    now[0] = 61.0
    assert [keeper.stopped(pid) for pid in (11, 12, 13)] == [True, True, False]
    keeper.held(60.0)  # the app thawed: the jobs the warden stopped stay stopped
    keeper.watch(14)
    assert [keeper.stopped(pid) for pid in (11, 14)] == [True, False]


def test_a_job_the_warden_stopped_is_interrupted_by_it_not_failed(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    keeper = warden.Warden.start(2.0)  # never renewed: the app is as good as frozen
    warden.install(keeper)
    try:
        result = runner.run(
            make_request(CommandAction(argv=(sys.executable, "-c", "import time; time.sleep(120)")))
        )
    finally:
        warden.install(None)
        keeper.close()
    assert (result.status, result.reason) == (RunStatus.interrupted, WARDEN_STOPPED)
    assert result.exit_code != 0
