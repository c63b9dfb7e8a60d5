"""A wake's claims written by the engine's writer in one transaction: on SQLite in a few
statements (``claims.Together``), on PostgreSQL one claim after the other; the same rows either
way."""

from __future__ import annotations

from datetime import datetime, timedelta

from domi_desktop.model import CommandAction, FireClaim, RunStatus, SkipReason, Trigger
from domi_desktop.store import Store

DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)


def test_a_wakes_claims_are_written_as_each_would_be_alone(store: Store, now: datetime) -> None:
    made = [
        store.create_schedule(f"job {n}", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=now)
        for n in range(6)
    ]  # fmt: skip
    late, stale, gone, held, busy, plain = (schedule.id for schedule in made)
    store.delete_schedule(gone)
    due, opened = now + 3 * DAY, now + 3 * DAY + MINUTE
    wake = [
        FireClaim(late, now, due, opened, Trigger.catch_up, late=True, missed_count=5,
                  skipped=(now + DAY, now + 2 * DAY)),
        FireClaim(stale, now - MINUTE, due, opened),
        FireClaim(gone, now, due, opened),
        FireClaim(held, now, due, opened, status=RunStatus.waiting, reason="waiting for the network"),
        FireClaim(busy, now, due, opened, status=RunStatus.skipped, reason=SkipReason.busy),
        FireClaim(plain, now, due, opened),
    ]  # fmt: skip
    writer = store.writer()
    try:
        ids, taken = writer.claim(wake)
    finally:
        writer.close()

    assert taken == frozenset()
    assert [run_id is None for run_id in ids] == [False, True, True, False, False, False]
    assert [store.get_schedule(s).last_due for s in (late, stale, held, busy, plain)] == [
        due, now, due, due, due,
    ]  # fmt: skip
    assert store.runs(stale) == []
    fire, *skipped = store.runs(late)
    assert fire.id == ids[0]
    assert (fire.status, fire.trigger, fire.due, fire.fired_at, fire.late, fire.missed_count) == (
        RunStatus.running, Trigger.catch_up, due, opened, True, 5,
    )  # fmt: skip
    assert [(r.status, r.reason, r.trigger, r.due, r.fired_at) for r in skipped] == [
        (RunStatus.skipped, "missed", Trigger.scheduled, now + 2 * DAY, opened),
        (RunStatus.skipped, "missed", Trigger.scheduled, now + DAY, opened),
    ]
    assert all(r.id < fire.id for r in skipped), "a claim's skipped instants come before it"
    for run_id, schedule_id, status, reason in (
        (ids[3], held, RunStatus.waiting, "waiting for the network"),
        (ids[4], busy, RunStatus.skipped, "busy"),
        (ids[5], plain, RunStatus.running, None),
    ):
        assert run_id is not None
        run = store.get_run(run_id)
        assert (run.schedule_id, run.status, run.reason, run.due) == (
            schedule_id, status, reason, due,
        )  # fmt: skip


def test_a_wake_that_claims_nothing_writes_nothing(store: Store, now: datetime) -> None:
    schedule = store.create_schedule(
        "job", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=now
    )
    writer = store.writer()
    try:
        ids, _ = writer.claim([FireClaim(schedule.id, now - DAY, now + DAY, now + DAY)])
    finally:
        writer.close()

    assert ids == [None]
    assert store.runs(schedule.id) == []
    assert store.get_schedule(schedule.id).last_due == now


def test_quitting_ends_the_claimed_runs_no_job_was_launched_for(
    store: Store, now: datetime
) -> None:
    made = [
        store.create_schedule(f"job {n}", "0 9 * * *", "UTC", CommandAction(argv=("true",)), now=now)
        for n in range(4)
    ]  # fmt: skip
    writer = store.writer()
    try:
        ids, _ = writer.claim([FireClaim(s.id, now, now + DAY, now + DAY) for s in made])
        launched, kept, *unlaunched = (run_id for run_id in ids if run_id is not None)
        writer.record_jobs([(launched, 4242, None)])
        ended = writer.abandon({kept}, now + DAY + MINUTE, "stopped: domi-desktop quit")
    finally:
        writer.close()

    assert ended == len(unlaunched) == 2
    assert [store.get_run(r).status for r in (launched, kept)] == [RunStatus.running] * 2
    for run_id in unlaunched:
        run = store.get_run(run_id)
        assert (run.status, run.reason, run.finished_at) == (
            RunStatus.interrupted, "stopped: domi-desktop quit", now + DAY + MINUTE,
        )  # fmt: skip
