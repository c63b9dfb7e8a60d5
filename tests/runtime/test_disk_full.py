"""A full disk (a real 3 MB tmpfs): a run's end is kept and written when space returns, ``busy``
only ever means a live job, and the user hears about it once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.model import CommandAction, RunStatus, StoreProblem, Trigger
from domi_desktop.runtime.engine import Runtime
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.fakes import FakeClock, FakeLoop

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)


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
            CommandAction(argv=(sys.executable, "-c", "pass")), now=START,
        )  # fmt: skip
        runtime = Runtime(store, clock, loop, MemorySecretStore())
        runtime.subscribe(events.append)
        first = runtime.run_now(schedule.id)
        second = runtime.run_now(schedule.id)
        filler = fill(tiny_disk)

        loop.drain(lambda: not runtime.running_runs())
        assert runtime.running_runs() == []  # the lanes are free: busy means a live job only
        problems = [e for e in events if isinstance(e, StoreProblem)]
        assert len(problems) == 1, problems
        assert "full" in problems[0].message
        assert store.get_run(first).status is RunStatus.running  # not written yet

        os.unlink(filler)
        clock.advance(timedelta(minutes=2))
        loop.run_due()
        for run_id in (first, second):
            run = store.get_run(run_id)
            assert run.status is RunStatus.succeeded and run.trigger is Trigger.manual
        assert len([e for e in events if isinstance(e, StoreProblem)]) == 1
        runtime.stop()
