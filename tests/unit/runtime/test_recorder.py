"""The engine's one writer: job pids recorded without waiting for the database and in few
transactions, and writes that another process's lock holds up kept, tried again and written in
the order they were given (a real lock, from a second process)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domi_desktop.errors import StoreUnavailable
from domi_desktop.model import CommandAction, RunStatus, Trigger
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.store import Store
from domi_desktop.store.claims import Finish
from domi_desktop.store.writer import Writer
from tests.support.fakes import FakeClock, FakeLoop
from tests.support.locks import write_lock

NOW = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)


class HeldWriter:
    """A transaction that waits for the test (a wake's write holding the lock), or fails."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail
        self.writing = threading.Event()
        self.go_on = threading.Event()
        self.closed = False

    def record_jobs(self, jobs: Sequence[tuple[int, int, str | None]]) -> None:
        self.writing.set()
        assert self.go_on.wait(30)
        if self.fail:
            raise OSError("disk full")
        self.batches.append([run_id for run_id, _pid, _started in jobs])

    def close(self) -> None:
        self.closed = True


class HeldStore:
    def __init__(self, writer: HeldWriter) -> None:
        self._writer = writer

    def writer(self) -> HeldWriter:
        return self._writer


def held(writer: HeldWriter) -> Recorder:
    return Recorder(HeldStore(writer), FakeLoop(FakeClock(NOW)))  # type: ignore[arg-type]


def test_a_start_is_recorded_without_waiting_for_the_database() -> None:
    writer = HeldWriter()
    recorder = held(writer)
    recorder.record_job(7, os.getpid())  # returns although the transaction is held
    assert writer.writing.wait(30)
    assert writer.batches == []
    writer.go_on.set()
    recorder.close()
    assert writer.batches == [[7]]
    assert writer.closed


def test_starts_while_a_write_is_held_go_in_the_next_transaction_together() -> None:
    writer = HeldWriter()
    recorder = held(writer)
    recorder.record_job(0, os.getpid())
    assert writer.writing.wait(30)
    for run_id in range(1, 100):
        recorder.record_job(run_id, os.getpid())
    writer.go_on.set()
    recorder.close()
    assert writer.batches == [[0], list(range(1, 100))]


def test_a_failed_write_is_logged_with_its_error_and_the_recorder_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer = HeldWriter(fail=True)
    writer.go_on.set()
    loop = FakeLoop(FakeClock(NOW))
    recorder = Recorder(HeldStore(writer), loop)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        recorder.record_job(3, os.getpid())
        recorder.record_job(4, os.getpid())
        recorder.close()
        loop.drain(lambda: "could not be recorded: disk full" in caplog.text)
    assert writer.closed


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "data", now=NOW) as opened:
        yield opened


def test_writes_held_up_by_another_process_are_kept_and_land_in_order(store: Store) -> None:
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=("true",)), now=NOW
    )
    runs = [store.record_manual_run(schedule.id, NOW, Trigger.manual) for _ in range(3)]
    loop = FakeLoop(FakeClock(NOW))
    recorder = Recorder(store, loop, backoff=(0.05, 0.2))
    trouble: list[StoreUnavailable | None] = []
    recorder.on_trouble = trouble.append
    answers: list[object] = []
    with write_lock(store.path):
        for index, run_id in enumerate(runs):
            finish = Finish(run_id, RunStatus.succeeded, NOW, exit_code=index)
            recorder.submit(lambda writer, f=finish: writer.finish([f]), answers.append)
        loop.drain(lambda: bool(trouble), timeout=60)
        assert answers == []  # nothing was dropped: all three wait behind the lock
    loop.drain(lambda: len(answers) == 3 and len(trouble) == 2, timeout=60)
    recorder.close()
    assert answers == [[True], [True], [True]]
    assert isinstance(trouble[0], StoreUnavailable) and "locked" in str(trouble[0])
    assert trouble[1] is None  # said once, and that it is over
    assert [store.get_run(run_id).exit_code for run_id in runs] == [0, 1, 2]


def test_on_quit_what_is_still_held_up_is_given_up_after_its_patience(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    schedule = store.create_schedule(
        "report", "* * * * *", "UTC", CommandAction(argv=("true",)), now=NOW
    )
    run_id = store.record_manual_run(schedule.id, NOW, Trigger.manual)
    recorder = Recorder(store, FakeLoop(FakeClock(NOW)), backoff=(0.05, 0.2))
    with write_lock(store.path), caplog.at_level(logging.ERROR):
        recorder.submit(
            lambda writer: writer.finish([Finish(run_id, RunStatus.succeeded, NOW, exit_code=0)])
        )
        recorder.close(patience=1.0)
    assert "a write was lost as the app quit" in caplog.text
    assert store.get_run(run_id).status is RunStatus.running


def test_a_writer_without_patience_gives_up_at_once(store: Store) -> None:
    writer: Writer = store.writer()
    try:
        with write_lock(store.path), pytest.raises(StoreUnavailable, match="locked"):
            writer.finish([Finish(1, RunStatus.succeeded, NOW)])
    finally:
        writer.close()


def test_a_wake_says_what_it_decided_before_its_claims_reach_a_locked_database(
    store: Store,
) -> None:
    from domi_desktop.events import FireEvent, WakeDecided
    from domi_desktop.model import WakeReason
    from domi_desktop.runtime.engine import Runtime
    from domi_desktop.secrets import MemorySecretStore

    schedule = store.create_schedule(
        "report", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=NOW
    )
    clock = FakeClock(NOW)
    loop = FakeLoop(clock)
    recorder = Recorder(store, loop, backoff=(0.05, 0.2))
    runtime = Runtime(store, clock, loop, MemorySecretStore(), recorder=recorder)
    events: list[object] = []
    runtime.subscribe(events.append)
    runtime.start()
    try:
        with write_lock(store.path):
            clock.advance(timedelta(days=3))  # asleep: three 09:00 dues, one runs late
            runtime.driver.wake(WakeReason.resume)
            (decided,) = [e for e in events if isinstance(e, WakeDecided)]
            assert decided.reason is WakeReason.resume
            late = [(fire.schedule_id, fire.missed_count) for fire in decided.late]
            assert late == [(schedule.id, 2)]
            assert not [e for e in events if isinstance(e, FireEvent)]  # nothing claimed yet
            assert store.runs(schedule_id=schedule.id) == []
        loop.drain(lambda: any(isinstance(e, FireEvent) for e in events), timeout=60)
        (fire,) = [e for e in events if isinstance(e, FireEvent)]
        assert fire.late and fire.missed_count == 2
    finally:
        runtime.stop()


def test_an_app_started_while_another_process_holds_the_lock_settles_dead_runs_after(
    store: Store,
) -> None:
    import sqlite3
    import subprocess
    import sys
    from contextlib import closing

    from domi_desktop.runtime.engine import Runtime
    from domi_desktop.secrets import MemorySecretStore

    schedule = store.create_schedule(
        "report", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=NOW
    )
    gone = subprocess.Popen([sys.executable, "-c", "pass"])  # a dead pid, on every OS
    gone.wait()
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute(
            'INSERT INTO runs (schedule_id, status, "trigger", fired_at, owner_pid, owner_token)'
            " VALUES (?, 'running', 'manual', 0, ?, 'gone')",
            (schedule.id, gone.pid),
        )
    (orphan,) = store.runs(schedule_id=schedule.id)
    clock = FakeClock(NOW)
    loop = FakeLoop(clock)
    runtime = Runtime(
        store, clock, loop, MemorySecretStore(), recorder=Recorder(store, loop, backoff=(0.05, 0.2))
    )
    try:
        with write_lock(store.path):
            runtime.start()  # the dead process's run waits for the lock, not the start
            assert store.get_run(orphan.id).status is RunStatus.running
        loop.advance(timedelta(seconds=2))
        loop.drain(lambda: len(store.runs(schedule_id=schedule.id)) == 2, timeout=60)
        assert store.get_run(orphan.id).status is RunStatus.interrupted
        resumed = store.runs(schedule_id=schedule.id)[0]
        assert resumed.trigger is Trigger.resumed and resumed.resumed_from == orphan.id
    finally:
        runtime.stop()


def test_retention_waits_for_a_lock_on_the_recorder_not_in_front_of_readers(
    store: Store,
) -> None:
    from domi_desktop.runtime.catchup import Pruner

    schedule = store.create_schedule(
        "report", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=NOW
    )
    old = NOW - timedelta(days=100)
    run_id = store.record_manual_run(schedule.id, old, Trigger.manual)
    store.finish_run(run_id, status=RunStatus.succeeded, finished_at=old, exit_code=0)
    clock = FakeClock(NOW)
    loop = FakeLoop(clock)
    recorder = Recorder(store, loop, backoff=(0.05, 0.2))
    with write_lock(store.path):
        Pruner(store, clock, recorder).maybe()
        assert [run.id for run in store.runs(schedule_id=schedule.id)] == [run_id]  # reads go on
    loop.drain(lambda: store.runs(schedule_id=schedule.id) == [], timeout=60)
    recorder.close()
    assert store.runs(schedule_id=schedule.id) == []
