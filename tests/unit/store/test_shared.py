"""What sharing a store between machines needs, on both backends: leases that another machine
takes over once they expire, a re-run that happens once, and a whole store copied across."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.errors import StoreError
from domi_desktop.model import CommandAction, FireClaim, RunStatus, Schedule, Trigger
from domi_desktop.store import Store
from domi_desktop.store import backend as backend_module
from domi_desktop.store import copy as copy_module
from domi_desktop.store.backend import STORE_ENV, hide_password, machine_name, resolve_url
from domi_desktop.store.leases import EXPIRED

LEASE = timedelta(seconds=60)
Sql = Callable[..., list[tuple[object, ...]]]


def _claim(store: Store, schedule: Schedule, now: datetime) -> int:
    run_id = store.claim_fire(
        FireClaim(schedule.id, expected_last_due=schedule.last_due, due=now, fired_at=now)
    )
    assert run_id is not None
    return run_id


def _as_machine(store: Store, name: str) -> None:
    """The same database seen from another machine: only the name on its writes differs."""
    store.holder = type(store.holder)(name, LEASE)


def test_a_claimed_run_carries_its_machine_and_a_lease_its_machine_renews(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    _as_machine(store, "laptop")
    run_id = _claim(store, schedule, now + timedelta(hours=2))
    assert store.renew_leases({run_id}, now + timedelta(hours=2, seconds=50)) == set()
    # Renewed: not expired 60 s after the claim, only 60 s after the renewal.
    _as_machine(store, "desktop")
    assert store.take_over_expired(now + timedelta(hours=2, seconds=70)) == []
    [taken] = store.take_over_expired(now + timedelta(hours=2, seconds=111))
    assert (taken.id, taken.status, taken.reason) == (
        run_id,
        RunStatus.interrupted,
        f"{EXPIRED}laptop",
    )


def test_an_expired_run_is_taken_over_once_and_its_machine_finds_it_superseded(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    due = now + timedelta(hours=2)
    _as_machine(store, "laptop")
    run_id = _claim(store, schedule, due)
    _as_machine(store, "desktop")
    later = due + 2 * LEASE
    # Its own runs are never taken over by a machine: they are judged by their process.
    [taken] = store.take_over_expired(later)
    assert store.take_over_expired(later) == []
    again = store.record_manual_run(schedule.id, later, Trigger.resumed, resumed_from=taken.id)
    with pytest.raises(StoreError, match="already resumed"):
        store.record_manual_run(schedule.id, later, Trigger.resumed, resumed_from=taken.id)
    # The laptop comes back: its run is no longer its own; nothing more is recorded for it.
    _as_machine(store, "laptop")
    assert store.renew_leases({run_id}, later) == {run_id}
    assert store.superseded_by(run_id) == "desktop"
    assert not store.finish_run(run_id, status=RunStatus.succeeded, finished_at=later)
    assert store.get_run(run_id).status is RunStatus.interrupted
    assert store.get_run(again).status is RunStatus.running


def test_skip_if_still_running_holds_across_machines_inside_the_claim(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    # Consecutive dues claimed by different machines: the second sees the first still running
    # in its own transaction and records its fire busy, whatever this machine's lanes know.
    first = now + timedelta(hours=2)
    _as_machine(store, "laptop")
    running = _claim(store, schedule, first)
    _as_machine(store, "desktop")
    writer = store.writer()
    try:
        second = first + timedelta(minutes=1)
        ([busy], taken) = writer.claim(
            [FireClaim(schedule.id, first, second, second, exclusive=True)]
        )
        assert busy is not None and taken == {busy}
        assert (store.get_run(busy).status, store.get_run(busy).reason) == (
            RunStatus.skipped,
            "busy",
        )
        # Not exclusive (overlap parallel): it runs beside the other machine's.
        third = second + timedelta(minutes=1)
        ([parallel], none) = writer.claim([FireClaim(schedule.id, second, third, third)])
        assert parallel is not None and none == frozenset()
        assert store.get_run(parallel).status is RunStatus.running
        # Once the laptop's run ended, the next exclusive fire runs; this machine's own running
        # run is its lanes' business, not the claim's.
        assert store.finish_run(running, status=RunStatus.succeeded, finished_at=third)
        fourth = third + timedelta(minutes=1)
        ([free], none) = writer.claim(
            [FireClaim(schedule.id, third, fourth, fourth, exclusive=True)]
        )
        assert free is not None and none == frozenset()
        assert store.get_run(free).status is RunStatus.running
    finally:
        writer.close()


def test_only_the_schedules_placed_here_are_taken_over(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    _as_machine(store, "laptop")
    _claim(store, schedule, now + timedelta(hours=2))
    _as_machine(store, "desktop")
    later = now + timedelta(hours=3)
    assert store.take_over_expired(later, schedule_ids=set()) == []
    assert store.take_over_expired(later, schedule_ids={schedule.id + 1}) == []
    assert len(store.take_over_expired(later, schedule_ids={schedule.id})) == 1


def test_a_run_of_another_machine_is_never_judged_by_a_local_process(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    _as_machine(store, "laptop")
    run_id = _claim(store, schedule, now + timedelta(hours=2))
    _as_machine(store, "desktop")
    # Its pid is alive here, but that says nothing about the laptop: the lease decides.
    assert store.interrupt_orphans(now) == []
    assert store.get_run(run_id).status is RunStatus.running


def test_take_overs_from_many_threads_return_each_run_once(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    _as_machine(store, "laptop")
    for hour in range(2, 12):
        _claim(store, store.get_schedule(schedule.id), now + timedelta(hours=hour))
    _as_machine(store, "desktop")
    taken: list[int] = []
    barrier = threading.Barrier(4)

    def take() -> None:
        barrier.wait()
        taken.extend(run.id for run in store.take_over_expired(now + timedelta(days=1)))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(set(taken)) and len(taken) == 10


def test_a_store_is_copied_whole_and_a_full_target_is_refused_without_force(
    data_dir: Path, tmp_path: Path, now: datetime, backend: str
) -> None:
    with Store.open(data_dir, now=now) as store:
        first = store.create_schedule("a", "* * * * *", "UTC", CommandAction(argv=("x",)), now=now)
        store.create_schedule("b", "0 9 * * *", "UTC", CommandAction(), now=now, enabled=False)
        for minute in range(1, 4):
            due = now + timedelta(minutes=minute)
            run_id = _claim(store, store.get_schedule(first.id), due)
            store.finish_run(run_id, status=RunStatus.succeeded, finished_at=due, exit_code=0)
        snapshot = store.dump()
        schedules, runs = store.list_schedules(), store.runs(limit=None)
    # Into the other backend: a SQLite file when the suite runs on PostgreSQL, and back.
    other = tmp_path / "other"
    url = "sqlite" if backend == "postgresql" else None
    env = os.environ.pop(STORE_ENV, None)
    try:
        with Store.open(other, now=now, url=url) as copy:
            copy.load(snapshot)
            assert copy.list_schedules() == schedules
            assert copy.runs(limit=None) == runs
            with pytest.raises(StoreError, match="already holds 2 schedules and 3 runs"):
                copy.load(snapshot)
            copy.load(snapshot, replace=True)
            # New rows get ids after the copied ones.
            assert copy.record_manual_run(first.id, now) == max(run.id for run in runs) + 1
            assert copy.get_schedule(first.id).last_due == now + timedelta(minutes=3)
    finally:
        if env is not None:
            os.environ[STORE_ENV] = env


def test_a_store_url_is_postgresql_or_sqlite_and_its_password_is_never_shown() -> None:
    assert resolve_url("sqlite") is None
    assert resolve_url("postgresql://u@db/x") == "postgresql://u@db/x"
    with pytest.raises(StoreError, match="expected a postgresql://"):
        resolve_url("mysql://u:secret@db/x")
    with pytest.raises(StoreError) as caught:
        resolve_url("mysql://u:secret@db/x")
    assert "secret" not in str(caught.value)
    assert hide_password("postgresql://u:secret@db:5432/x") == "postgresql://u:***@db:5432/x"
    assert machine_name("kitchen") == "kitchen"
    with pytest.raises(StoreError, match="machine name"):
        machine_name(" x" * 40)


def test_an_edit_reaches_the_other_instances_and_a_lost_link_is_reported(
    store: Store, schedule: Schedule, now: datetime, sql: Sql, backend: str
) -> None:
    changes = threading.Semaphore(0)
    statuses: list[str | None] = []
    listener = store.listener(changes.release, statuses.append)
    if backend == "sqlite":
        assert listener is None  # the per-wake re-read sees another process's edits
        return
    assert listener is not None
    listener.start()
    try:
        assert changes.acquire(timeout=10)  # the re-read on connecting
        store.update_schedule(schedule.id, now=now, name="renamed")
        # Only a notification can come (the listener never polls): a generous deadline for
        # loaded machines; ``bench/store_bench.py`` measures how long it takes.
        assert changes.acquire(timeout=60), "no notification"
        sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE starts_with(query, 'LISTEN')"
        )
        assert changes.acquire(timeout=15)  # reconnected, and re-read what it may have missed
        assert statuses[0] is None and statuses[-1] is None
        assert any(status and "unreachable" in status for status in statuses)
    finally:
        listener.stop()


def test_a_machine_frozen_inside_a_transaction_holds_the_others_up_only_until_its_session_ends(
    store: Store, schedule: Schedule, now: datetime, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "sqlite":
        pytest.skip("one machine: SQLite's lock is the file's, waited for BUSY_TIMEOUT")
    monkeypatch.setattr(backend_module, "IDLE_IN_TRANSACTION", 0.5)
    frozen = store.writer()  # a connection of its own, like another machine's
    # Its transaction took a row lock, then its machine froze (a closed lid, SIGSTOP).
    frozen._db.execute_sql("BEGIN")  # type: ignore[no-untyped-call]
    frozen._db.execute_sql(  # type: ignore[no-untyped-call]
        "UPDATE schedules SET last_due = last_due WHERE id = %s", (schedule.id,)
    )
    edited = threading.Event()

    def edit() -> None:
        store.update_schedule(schedule.id, now=now, name="edited while the other froze")
        edited.set()

    threading.Thread(target=edit, daemon=True).start()
    waited = edited.wait(10)
    if not waited:  # let the edit through, or the store would wait for it at its close
        frozen._db.execute_sql("ROLLBACK")  # type: ignore[no-untyped-call]
    assert waited, "the edit waited for the frozen machine's lock for good"
    assert store.get_schedule(schedule.id).name == "edited while the other froze"
    # The frozen machine is back: the use that finds its session ended fails; the next works.
    run_id = _claim(store, store.get_schedule(schedule.id), now + timedelta(minutes=1))
    with pytest.raises(StoreError, match=r"idle-in-transaction|terminat|closed"):
        frozen.record_jobs([(run_id, os.getpid(), None)])
    frozen.record_jobs([(run_id, os.getpid(), None)])
    frozen.close()


def test_a_copy_is_one_long_transaction_that_the_frozen_session_timeout_leaves_be(
    data_dir: Path, now: datetime, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "sqlite":
        pytest.skip("the timeout is PostgreSQL's")
    monkeypatch.setattr(backend_module, "IDLE_IN_TRANSACTION", 0.2)
    insert = copy_module._insert

    def slow_insert(*args: Any) -> None:
        time.sleep(0.5)  # Python preparing a big table's rows between two statements
        insert(*args)

    monkeypatch.setattr(copy_module, "_insert", slow_insert)
    with Store.open(data_dir, now=now) as store:
        store.create_schedule("a", "* * * * *", "UTC", CommandAction(argv=("x",)), now=now)
        snapshot = store.dump()
        store.load(snapshot, replace=True)
        assert [schedule.name for schedule in store.list_schedules()] == ["a"]


def test_the_hot_paths_batches_never_leave_a_session_busy_in_a_pipeline(
    store: Store,
    schedule: Schedule,
    now: datetime,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    sql: Sql,
) -> None:
    # A session that froze before its pipeline's end is busy to the server, which then never ends
    # it (IDLE_IN_TRANSACTION): a batch on PostgreSQL is one statement, or one per row.
    if backend == "sqlite":
        pytest.skip("pipelines are psycopg's")
    import psycopg

    def no_pipeline(*_args: Any, **_options: Any) -> Any:
        raise AssertionError("a batch went out as a pipeline")

    monkeypatch.setattr(psycopg.Connection, "pipeline", no_pipeline)
    monkeypatch.setattr(psycopg.Connection, "_pipeline_nolock", no_pipeline)
    writer = store.writer()
    due = now + timedelta(minutes=100)
    skipped = tuple(now + timedelta(minutes=minute) for minute in range(1, 100))
    [run_id], _ = writer.claim(
        [FireClaim(schedule.id, schedule.last_due, due, due, missed_count=99, skipped=skipped)]
    )
    assert run_id is not None
    writer.record_jobs([(run_id, os.getpid(), "marker")])
    writer.close()
    runs = store.runs(schedule_id=schedule.id, limit=None)
    assert sorted(run.due for run in runs if run.status is RunStatus.skipped) == list(skipped)
    assert store.get_run(run_id).status is RunStatus.running
    assert sql("SELECT job_pid, job_started FROM runs WHERE id = ?", run_id) == [
        (os.getpid(), "marker")
    ]
