"""A full disk (a real 3 MB tmpfs): a run's end is kept and written when space returns, ``busy``
only ever means a live job, and the user hears about it once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from domi_desktop.events import StoreProblem
from domi_desktop.model import CommandAction, Overlap, Policies, RunStatus, Trigger
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)
pytestmark = pytest.mark.linux_only  # a full disk is a tmpfs mounted by root


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Take every free byte of the file system; returns the file to delete to free them."""
    filler = directory / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 1):
            try:
                while os.write(descriptor, b"\0" * size):
                    pass
            except OSError:
                pass
    finally:
        os.close(descriptor)
    return filler


def test_it_keeps_a_result_the_full_disk_refused_frees_the_lane_and_says_so_once(
    tiny_disk: Path,
) -> None:
    clock = FakeClock(START)
    loop = FakeLoop(clock)
    events: list[object] = []
    with Store.open(tiny_disk / "data", now=START) as store:
        schedule = store.create_schedule(
            "report", "* * * * *", "UTC",
            CommandAction(argv=(sys.executable, "-c", "pass")),
            Policies(overlap=Overlap.parallel), now=START,
        )  # fmt: skip
        recorder = Recorder(store, loop, backoff=(0.05, 0.2))
        runtime = Runtime(store, clock, loop, MemorySecretStore(), recorder=recorder)
        runtime.subscribe(events.append)
        ids: list[int | Exception] = []
        runtime.run_now(schedule.id, ids.append)
        runtime.run_now(schedule.id, ids.append)
        loop.drain(lambda: len(ids) == 2)
        first, second = ids
        assert isinstance(first, int) and isinstance(second, int)
        filler = fill(tiny_disk)

        loop.drain(lambda: not runtime.running_runs() and any_problem(events))
        assert runtime.running_runs() == []  # the lanes are free: busy means a live job only
        problems = [e for e in events if isinstance(e, StoreProblem)]
        assert len(problems) == 1, problems
        assert "full" in problems[0].message
        assert "full" in (runtime.store_problem or "")  # what app.status reports meanwhile
        assert store.get_run(first).status is RunStatus.running  # not written yet

        os.unlink(filler)
        loop.drain(lambda: all(done(store, run_id) for run_id in (first, second)), timeout=60)
        for run_id in (first, second):
            run = store.get_run(run_id)
            assert run.status is RunStatus.succeeded and run.trigger is Trigger.manual
        assert len([e for e in events if isinstance(e, StoreProblem)]) == 1
        assert runtime.store_problem is None
        runtime.stop()


def any_problem(events: list[object]) -> bool:
    return any(isinstance(e, StoreProblem) for e in events)


def done(store: Store, run_id: int) -> bool:
    return store.get_run(run_id).status is not RunStatus.running
