from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import CommandAction, FireClaim, RunStatus, Schedule, SkipReason, Trigger
from domi_desktop.store import Store, _open, claims, retention

Sql = Callable[..., list[tuple[object, ...]]]
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)


def test_a_claim_advances_last_due_and_records_the_skipped_and_the_fire(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    due = now + 3 * DAY
    opened = due + timedelta(hours=1)
    run_id = store.claim_fire(
        FireClaim(
            schedule.id,
            expected_last_due=now,
            due=due,
            fired_at=opened,
            trigger=Trigger.catch_up,
            late=True,
            missed_count=2,
            skipped=[now + DAY, now + 2 * DAY],
        )
    )

    assert run_id is not None
    assert store.get_schedule(schedule.id).last_due == due
    fire, *skipped = store.runs(schedule.id)
    assert fire == store.get_run(run_id)
    assert (fire.status, fire.trigger, fire.due, fire.fired_at) == (
        RunStatus.running,
        Trigger.catch_up,
        due,
        opened,
    )
    assert (fire.late, fire.missed_count, fire.started_at, fire.attempt) == (True, 2, None, 0)
    assert [(r.status, r.reason, r.trigger, r.due) for r in skipped] == [
        (RunStatus.skipped, "missed", Trigger.scheduled, now + 2 * DAY),
        (RunStatus.skipped, "missed", Trigger.scheduled, now + DAY),
    ]


def test_a_stale_claim_writes_nothing_and_says_so(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    first = store.claim_fire(
        FireClaim(schedule.id, expected_last_due=now, due=now + DAY, fired_at=now + DAY)
    )
    again = store.claim_fire(
        FireClaim(
            schedule.id,
            expected_last_due=now,
            due=now + DAY,
            fired_at=now + DAY,
            missed_count=1,
            skipped=[now + DAY / 2],
        )
    )
    assert first is not None
    assert again is None
    assert store.count_runs() == 1
    assert store.get_schedule(schedule.id).last_due == now + DAY


def test_an_edit_between_decision_and_claim_wins_over_the_claim(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    store.update_schedule(schedule.id, now=now + MINUTE, expr="*/2 * * * *")
    claimed = store.claim_fire(
        FireClaim(schedule.id, expected_last_due=now, due=now + DAY, fired_at=now)
    )
    assert claimed is None
    assert store.count_runs() == 0


def test_a_fire_turned_into_a_skip_by_a_policy_is_recorded_with_its_reason(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    run_id = store.claim_fire(
        FireClaim(
            schedule.id,
            expected_last_due=now,
            due=now + DAY,
            fired_at=now + DAY,
            status=RunStatus.skipped,
            reason=SkipReason.busy,
        )
    )
    assert run_id is not None
    run = store.get_run(run_id)
    assert (run.status, run.reason, run.due) == (RunStatus.skipped, "busy", now + DAY)
    assert store.get_schedule(schedule.id).last_due == now + DAY
    assert store.running_runs() == []


def test_a_claim_compares_instants_exactly_whatever_their_zone(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    due = now + timedelta(days=1, microseconds=7)
    store.claim_fire(FireClaim(schedule.id, expected_last_due=now, due=due, fired_at=due))
    same_instant = due.astimezone(timezone(timedelta(hours=-7)))
    off_by_one = due - timedelta(microseconds=1)
    assert (
        store.claim_fire(
            FireClaim(schedule.id, expected_last_due=off_by_one, due=due + DAY, fired_at=due)
        )
        is None
    )
    assert (
        store.claim_fire(
            FireClaim(schedule.id, expected_last_due=same_instant, due=due + DAY, fired_at=due)
        )
        is not None
    )


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=400)),
        min_size=1,
        max_size=5,
    )
)
def test_claims_chain_on_the_exact_last_due_they_stored(
    store: Store, schedule: Schedule, steps: list[timedelta]
) -> None:
    last_due = store.get_schedule(schedule.id).last_due
    assert last_due is not None
    for step in steps:
        due = last_due + step
        run_id = store.claim_fire(
            FireClaim(schedule.id, expected_last_due=last_due, due=due, fired_at=due)
        )
        assert run_id is not None
        assert store.get_run(run_id).due == due
        stored = store.get_schedule(schedule.id).last_due
        assert stored == due
        last_due = stored


def test_a_claim_on_a_schedule_without_last_due_compares_with_null(
    store: Store, schedule: Schedule, now: datetime, sql: Sql
) -> None:
    sql("UPDATE schedules SET last_due = NULL WHERE id = ?", schedule.id)
    assert (
        store.claim_fire(FireClaim(schedule.id, expected_last_due=now, due=now + DAY, fired_at=now))
        is None
    )
    assert (
        store.claim_fire(FireClaim(schedule.id, expected_last_due=None, due=now, fired_at=now))
        is not None
    )


def test_claims_that_make_no_sense_are_refused_before_touching_anything(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    with pytest.raises(NotFoundError, match="no schedule with id 99"):
        store.claim_fire(FireClaim(99, expected_last_due=now, due=now + DAY, fired_at=now))
    with pytest.raises(ValueError, match="not after last_due"):
        store.claim_fire(FireClaim(schedule.id, expected_last_due=now, due=now, fired_at=now))
    with pytest.raises(ValueError, match="running or skipped"):
        store.claim_fire(
            FireClaim(
                schedule.id,
                expected_last_due=now,
                due=now + DAY,
                fired_at=now,
                status=RunStatus.succeeded,
            )
        )
    with pytest.raises(ValueError, match="missed_count"):
        store.claim_fire(
            FireClaim(
                schedule.id, expected_last_due=now, due=now + DAY, fired_at=now, skipped=[now]
            )
        )
    assert store.count_runs() == 0
    assert store.get_schedule(schedule.id).last_due == now


def test_a_manual_run_leaves_the_calendar_alone(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    run_id = store.record_manual_run(schedule.id, now + MINUTE)
    run = store.get_run(run_id)
    assert (run.status, run.trigger, run.due, run.fired_at) == (
        RunStatus.running,
        Trigger.manual,
        None,
        now + MINUTE,
    )
    assert store.get_schedule(schedule.id).last_due == now
    with pytest.raises(NotFoundError, match="no schedule with id 77"):
        store.record_manual_run(77, now)
    with pytest.raises(NotFoundError, match="no run with id 77"):
        store.record_manual_run(schedule.id, now, Trigger.resumed, resumed_from=77)


def test_a_run_is_started_and_finished_once(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    run_id = store.record_manual_run(schedule.id, now)
    log = store.log_path_for(run_id)
    assert store.start_run(run_id, now + MINUTE, log, attempt=1)
    assert store.finish_run(
        run_id,
        status=RunStatus.failed,
        finished_at=now + 2 * MINUTE,
        exit_code=3,
        reason="exit status 3",
        output_tail="boom",
    )
    assert not store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now + DAY)
    assert not store.start_run(run_id, now + DAY)

    run = store.get_run(run_id)
    assert (run.status, run.exit_code, run.reason, run.output_tail) == (
        RunStatus.failed,
        3,
        "exit status 3",
        "boom",
    )
    assert (run.log_path, run.attempt, run.duration) == (str(log), 1, MINUTE)


def test_unknown_runs_and_wrong_outcomes_are_refused(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    for attempt in (
        lambda: store.get_run(5),
        lambda: store.start_run(5, now),
        lambda: store.finish_run(5, status=RunStatus.failed, finished_at=now),
        lambda: store.runs(schedule_id=5),
        lambda: store.count_runs(schedule_id=5),
    ):
        with pytest.raises(NotFoundError, match="with id 5"):
            attempt()
    run_id = store.record_manual_run(schedule.id, now)
    with pytest.raises(ValueError, match="final status"):
        store.finish_run(run_id, status=RunStatus.running, finished_at=now)


def test_runs_are_listed_newest_first_filtered_and_paged(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    other = store.create_schedule("other", "* * * * *", "UTC", schedule.action, now=now)
    ids = []
    for i in range(5):
        ids.append(store.record_manual_run(schedule.id, now + i * MINUTE))
        store.record_manual_run(other.id, now)
    for run_id in ids[:3]:
        store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now + DAY)

    assert [r.id for r in store.runs(schedule.id)] == ids[::-1]
    first_page = store.runs(schedule.id, limit=2)
    second_page = store.runs(schedule.id, limit=2, before_id=first_page[-1].id)
    assert [r.id for r in first_page + second_page] == ids[:0:-1]
    succeeded = store.runs(schedule.id, status=RunStatus.succeeded)
    assert [r.id for r in succeeded] == ids[2::-1]
    assert store.count_runs() == 10
    assert store.count_runs(schedule.id, RunStatus.running) == 2
    assert len(store.running_runs()) == 7


def test_prune_keeps_the_newest_runs_of_each_schedule_and_the_running_ones(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    ids = [store.record_manual_run(schedule.id, now) for _ in range(6)]
    for run_id in ids[1:]:
        log = store.log_path_for(run_id)
        log.write_text("old output")
        store.start_run(run_id, now, log)
        store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now)

    assert store.prune(now, keep_per_schedule=2) == 3

    assert [r.id for r in store.runs()] == [ids[5], ids[4], ids[0]]
    assert sorted(path.name for path in store.log_dir.iterdir()) == [
        f"run-{ids[4]}.log",
        f"run-{ids[5]}.log",
    ]


def test_prune_counts_the_runs_of_a_few_schedules_at_a_time_and_misses_none(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retention, "CROWD_SPAN", 2)
    kept: set[int] = set()
    for index in range(5):
        schedule = store.create_schedule(f"s{index}", "* * * * *", "UTC", CommandAction(), now=now)
        ids = [store.record_manual_run(schedule.id, now) for _ in range(4)]
        for run_id in ids:
            store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now)
        kept.update(ids[-2:])
    assert len(retention.schedule_spans(retention.CROWD_SPAN)) == 3

    assert store.prune(now, keep_per_schedule=2) == 10
    assert {r.id for r in store.runs()} == kept


def test_prune_drops_finished_runs_fired_before_the_age_limit(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    old = store.record_manual_run(schedule.id, now - 91 * DAY)
    store.finish_run(old, status=RunStatus.failed, finished_at=now - 91 * DAY)
    still_running = store.record_manual_run(schedule.id, now - 100 * DAY)
    recent = store.record_manual_run(schedule.id, now - 89 * DAY)
    store.finish_run(recent, status=RunStatus.succeeded, finished_at=now - 89 * DAY)

    assert store.prune(now) == 1
    assert {r.id for r in store.runs()} == {still_running, recent}


def test_old_runs_are_pruned_on_open(data_dir: Path, now: datetime) -> None:
    with Store.open(data_dir, now=now) as store:
        schedule = store.create_schedule("s", "* * * * *", "UTC", CommandAction(), now=now)
        run_id = store.record_manual_run(schedule.id, now)
        store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now)
    with Store.open(data_dir, now=now + 91 * DAY) as store:
        assert store.count_runs() == 0


def test_a_claim_never_prunes_retention_is_left_to_the_app(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    old = store.record_manual_run(schedule.id, now - 200 * DAY)
    store.finish_run(old, status=RunStatus.succeeded, finished_at=now - 200 * DAY)
    for day in range(1, 4):
        store.claim_fire(
            FireClaim(
                schedule.id,
                expected_last_due=now + (day - 1) * DAY if day > 1 else now,
                due=now + day * DAY,
                fired_at=now + day * DAY,
            )
        )
    assert store.get_run(old).status is RunStatus.succeeded
    assert store.prune(now + 4 * DAY) == 1


def test_prune_deletes_in_chunks_each_its_own_transaction(
    store: Store,
    schedule: Schedule,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    backend: str,
) -> None:
    monkeypatch.setattr(retention, "DELETE_CHUNK", 2)
    for _ in range(5):
        run_id = store.record_manual_run(schedule.id, now - 100 * DAY)
        store.finish_run(run_id, status=RunStatus.succeeded, finished_at=now - 100 * DAY)
    commits: list[str] = []
    if backend == "sqlite":
        store._db.connection().set_trace_callback(
            lambda sql: commits.append(sql) if sql == "COMMIT" else None
        )
    else:
        inner = claims.write_transaction

        @contextmanager
        def counted(db: Any) -> Iterator[Any]:
            with inner(db) as cursor:
                yield cursor
            commits.append("COMMIT")

        monkeypatch.setattr(claims, "write_transaction", counted)
    assert store.prune(now) == 5
    assert len(commits) == 3
    assert store.count_runs() == 0


def test_threads_can_share_one_store(store: Store, schedule: Schedule, now: datetime) -> None:
    ids: list[int] = []

    def record() -> None:
        for _ in range(25):
            ids.append(store.record_manual_run(schedule.id, now))

    threads = [threading.Thread(target=record) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 100
    assert store.count_runs() == 100


def test_a_claim_while_another_program_holds_the_lock_fails_clearly_and_changes_nothing(
    data_dir: Path, now: datetime, sql: Sql, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    if backend != "sqlite":
        pytest.skip("SQLite's file lock; PostgreSQL locks rows, a claim waits for the one it needs")
    monkeypatch.setattr(_open, "BUSY_TIMEOUT", 0.1)
    with Store.open(data_dir, now=now) as store:
        schedule = store.create_schedule("s", "* * * * *", "UTC", CommandAction(), now=now)
        sql("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match="is locked by another process") as caught:
                store.claim_fire(
                    FireClaim(schedule.id, expected_last_due=now, due=now + DAY, fired_at=now)
                )
            assert str(store.path) in str(caught.value)
        finally:
            sql("ROLLBACK")
        assert store.count_runs() == 0
        assert store.get_schedule(schedule.id).last_due == now
