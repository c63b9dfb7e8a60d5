"""The architecture of a wake: the catch-up of 1,000 schedules after three days asleep is written
by the store's worker, and the Qt loop keeps turning meanwhile. ``bench/wake_bench.py`` measures
how long the loop may stand still (its gap_ms); a bound on it here failed on loaded machines
(0.589 s), so this checks the shape only: where the write ran and that the loop turned during it."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QTimer

from domi_desktop.app.qtloop import QtLoop
from domi_desktop.events import FireEvent, RunFinished
from domi_desktop.model import CommandAction, Policies
from domi_desktop.runtime import engine
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock

SCHEDULES = 1000


def test_it_catches_up_a_thousand_schedules_without_blocking_the_loop(
    core_app: QCoreApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wall clock stands still: a minute turning during the test would fire the every-minute
    # schedules again. The loop, its timers and the heartbeat run in real time.
    clock = FakeClock(datetime.now(UTC).replace(second=30, microsecond=0))
    # The wake's write (tens of thousands of rows) is the long part: where it runs, and whether
    # the heartbeat ticks while it runs, is what the loop staying free means.
    writes: list[str] = []
    writing = threading.Event()
    write_wake = engine.write_wake

    def watched_write_wake(*args: object) -> object:
        writes.append(threading.current_thread().name)
        writing.set()
        try:
            return write_wake(*args)  # type: ignore[arg-type]
        finally:
            writing.clear()

    monkeypatch.setattr(engine, "write_wake", watched_write_wake)
    asleep_since = clock.now() - timedelta(days=3)
    with Store.open(tmp_path / "data", now=asleep_since) as store:
        for index in range(SCHEDULES):
            expr = ("* * * * *", "*/5 * * * *", "0 * * * *", "30 9 * * *")[index % 4]
            store.create_schedule(
                f"job {index}", expr, "UTC", CommandAction(argv=("true",)),
                Policies(), now=asleep_since,
            )  # fmt: skip
        loop = QtLoop()
        wakes: list[WakePlan] = []
        fired: list[FireEvent] = []
        finished: list[RunFinished] = []
        runtime = Runtime(
            store, clock, loop, MemorySecretStore(),
            recorder=Recorder(store, loop),
            on_wake=lambda plan, _reason: wakes.append(plan),
        )  # fmt: skip
        runtime.subscribe(
            lambda e: fired.append(e) if isinstance(e, FireEvent)
            else finished.append(e) if isinstance(e, RunFinished) else None
        )  # fmt: skip
        ticks_while_writing: list[int] = []
        heartbeat = QTimer()
        heartbeat.setInterval(10)
        heartbeat.timeout.connect(
            lambda: ticks_while_writing.append(len(fired)) if writing.is_set() else None
        )
        heartbeat.start()
        deadline = time.monotonic() + 300
        woke = clock.now()
        loop.call_soon(runtime.start)
        try:
            while (len(fired) < SCHEDULES or len(finished) < _ran(fired)) and (
                time.monotonic() < deadline
            ):
                core_app.processEvents()
                time.sleep(0.001)
        finally:  # its jobs and its worker's thread, also when the wait failed
            heartbeat.stop()
            runtime.stop()

        # A minute may turn during the test: its fires (one row each, run or skipped as busy)
        # come after the catch-up's.
        later = [event for event in fired if event.due is not None and event.due > woke]
        assert len(fired) - len(later) == SCHEDULES and len(finished) == _ran(fired)
        assert wakes and not wakes[0].errors
        main = threading.main_thread().name
        assert writes and main not in writes, f"the wake was written on {writes}"
        assert ticks_while_writing, "the loop stood still while the wake was written"
        # Three days: per 4 schedules 100 listed skips + the fire twice, 71 + 1, and 2 + 1.
        assert store.count_runs() == SCHEDULES // 4 * (101 + 101 + 72 + 3) + len(later)


def _ran(fired: list[FireEvent]) -> int:
    return sum(event.skipped is None for event in fired)
