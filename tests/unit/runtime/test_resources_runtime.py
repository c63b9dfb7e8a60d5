"""Resource conditions at the runtime: a job waiting for its disk, on a fake clock with a fake source that
is told what to watch; real SQLite, real processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from domi_desktop.model import Conditions, RunStatus, SystemState, Trigger, Volume, Wanted
from domi_desktop.store import Store
from tests.support.runtime import START, FakeSource, RuntimeHarness, harnesses
from tests.unit.runtime.test_conditions_runtime import MAINS, cmd

BACKUP = Volume("Backup", "1234-ABCD", "/media/me/Backup")
OTHER = Volume("Photos", "9999-0000", "/media/me/Photos")
PLUGGED = replace(MAINS, volumes=(BACKUP,))


class WatchingSource(FakeSource):
    """A source that is told what to watch, as the platform's is (``ports.ResourceWatch``)."""

    def __init__(self, state: SystemState, *, watches: bool = True) -> None:
        super().__init__(state, watches=watches)
        self.wanted: list[Wanted] = []

    def want(self, wanted: Wanted) -> None:
        self.wanted.append(wanted)

    def current(self) -> SystemState:
        """Disks only when told to look for one, as the platform's source."""
        looking = bool(self.wanted and self.wanted[-1].volumes)
        return self.state if looking else replace(self.state, volumes=())


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., RuntimeHarness]]:
    store = Store.open(tmp_path / "data", now=START)
    try:
        with harnesses(store, state=MAINS, source_type=WatchingSource) as build:
            yield build
    finally:
        store.close()


def env_job(out: Path) -> Any:
    return cmd(
        "import os, pathlib\n"
        f"pathlib.Path({str(out)!r}).write_text(os.environ.get('DOMI_VOLUME_PATH', '-'))"
    )


def test_it_waits_for_its_disk_and_tells_the_job_where_it_is(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(replace(MAINS, volumes=(OTHER,)))
    out = tmp_path / "where"
    job = h.add("0 11 * * *", env_job(out), conditions=Conditions(volume="Backup"))
    h.start()
    source = h.source
    assert isinstance(source, WatchingSource)
    assert source.wanted == [], "nothing waits yet: nothing is watched"
    h.loop.advance(timedelta(hours=1, minutes=30))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting and run.reason == "waiting for the disk Backup"
    assert source.wanted[-1] == Wanted(volumes=frozenset({"Backup"}))
    source.change(replace(MAINS, volumes=(OTHER, BACKUP)))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert out.read_text() == "/media/me/Backup"
    run = h.store.get_run(run.id)
    assert run.status is RunStatus.succeeded and run.late
    assert run.reason == "started after waiting 30 minutes for the disk Backup"
    assert source.wanted[-1] == Wanted(), "nothing waits any more: nothing is watched"


def test_plugged_again_the_same_day_runs_nothing_more(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(MAINS)
    out = tmp_path / "where"
    job = h.add("0 11 * * *", env_job(out), conditions=Conditions(volume="UUID=1234-abcd"))
    h.start()
    h.loop.advance(timedelta(hours=1, minutes=5))
    for _ in range(5):
        h.source.change(PLUGGED)
        h.loop.advance(timedelta(minutes=10))
        h.source.change(MAINS)
        h.loop.advance(timedelta(minutes=10))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert [r.status for r in h.store.runs(schedule_id=job.id)] == [RunStatus.succeeded]


def test_a_disk_pulled_mid_run_stops_the_job_and_it_runs_once_more_when_back(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(PLUGGED)
    count = tmp_path / "count"
    pid = tmp_path / "pid"
    script = (
        f"import os, pathlib, time\np = pathlib.Path({str(count)!r})\n"
        "n = int(p.read_text()) if p.exists() else 0\np.write_text(str(n + 1))\n"
        f"pathlib.Path({str(pid)!r}).write_text(str(os.getpid()))\n"
        "time.sleep(0.2 if n else 300)"
    )
    job = h.add(
        "0 11 * * *", cmd(script), conditions=Conditions(volume="Backup", stop_if_lost=True)
    )
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.drain_until(pid.exists)
    h.source.change(MAINS)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    first, again = sorted(h.store.runs(schedule_id=job.id), key=lambda r: r.id)
    assert first.status is RunStatus.interrupted
    assert first.reason == "stopped: the disk Backup was unplugged"
    # Not os.kill(pid, 0): on Windows it terminates the process it names, and never raises
    # ProcessLookupError (under Wine it failed with SystemError).
    assert not psutil.pid_exists(int(pid.read_text()))
    assert again.status is RunStatus.waiting and again.trigger is Trigger.resumed
    assert again.reason == "waiting for the disk Backup"
    h.source.change(PLUGGED)
    h.drain_until(lambda: len(h.kinds("run.finished")) >= 2)
    assert h.store.get_run(again.id).status is RunStatus.succeeded
    assert count.read_text() == "2" and len(h.store.runs(schedule_id=job.id)) == 2


def test_a_manual_run_is_told_where_its_disk_is_too(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(PLUGGED)
    out = tmp_path / "where"
    job = h.add("0 0 1 1 *", env_job(out), conditions=Conditions(volume="Backup"))
    h.start()
    h.runtime.run_now(job.id)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert out.read_text() == "/media/me/Backup"
