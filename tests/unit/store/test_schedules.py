from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.errors import NotFoundError, StoreError
from domi_desktop.model import (
    CatchUp,
    CommandAction,
    HttpAction,
    Policies,
    RunStatus,
    Schedule,
)
from domi_desktop.store import Store

Sql = Callable[..., list[tuple[object, ...]]]
LATER = timedelta(hours=3)


def test_a_new_schedule_starts_at_now_so_nothing_fires_for_the_past(
    store: Store, now: datetime
) -> None:
    created = store.create_schedule(
        "ping",
        "*/5 * * * *",
        "local",
        HttpAction(url="https://example.org", secret_headers=(("Authorization", "ping"),)),
        Policies(catch_up=CatchUp.skip, timeout=timedelta(seconds=20)),
        enabled=False,
        now=now,
    )
    assert created.last_due == now
    assert created.created_at == created.updated_at == now
    assert created.enabled is False
    assert store.get_schedule(created.id) == created
    assert store.list_schedules() == [created]


def test_times_given_in_any_zone_come_back_as_the_same_instant_in_utc(store: Store) -> None:
    berlin_morning = datetime(2026, 3, 2, 9, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    created = store.create_schedule("a", "0 9 * * *", "UTC", CommandAction(), now=berlin_morning)
    assert created.last_due == berlin_morning
    assert created.last_due is not None
    assert created.last_due.utcoffset() == timedelta(0)


def test_schedules_are_listed_by_id(store: Store, now: datetime) -> None:
    names = ["c", "a", "b"]
    for name in names:
        store.create_schedule(name, "* * * * *", "UTC", CommandAction(argv=("true",)), now=now)
    assert [schedule.name for schedule in store.list_schedules()] == names


def test_an_unknown_schedule_id_is_not_found_and_named(store: Store, now: datetime) -> None:
    for attempt in (
        lambda: store.get_schedule(42),
        lambda: store.update_schedule(42, now=now, name="x"),
        lambda: store.set_enabled(42, True, now),
        lambda: store.delete_schedule(42),
    ):
        with pytest.raises(NotFoundError, match="no schedule with id 42"):
            attempt()


def test_renaming_keeps_last_due(store: Store, schedule: Schedule, now: datetime) -> None:
    updated = store.update_schedule(schedule.id, now=now + LATER, name="renamed")
    assert updated.name == "renamed"
    assert updated.last_due == schedule.last_due
    assert updated.updated_at == now + LATER
    assert updated.created_at == schedule.created_at


@pytest.mark.parametrize(
    "change", [{"expr": "30 9 * * *"}, {"tz": "America/New_York"}], ids=["expr", "tz"]
)
def test_a_new_expression_or_zone_resets_last_due_to_now(
    store: Store, schedule: Schedule, now: datetime, change: dict[str, Any]
) -> None:
    updated = store.update_schedule(schedule.id, now=now + LATER, **change)
    assert updated.last_due == now + LATER
    for key, value in change.items():
        assert getattr(updated, key) == value


def test_setting_the_same_expression_again_is_no_change(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    updated = store.update_schedule(
        schedule.id, now=now + LATER, expr=schedule.expr, tz=schedule.tz
    )
    assert updated.last_due == schedule.last_due


def test_re_enabling_resets_last_due_and_disabling_does_not(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    disabled = store.set_enabled(schedule.id, False, now + LATER)
    assert (disabled.enabled, disabled.last_due) == (False, schedule.last_due)
    enabled = store.set_enabled(schedule.id, True, now + 2 * LATER)
    assert (enabled.enabled, enabled.last_due) == (True, now + 2 * LATER)
    again = store.set_enabled(schedule.id, True, now + 3 * LATER)
    assert again.last_due == now + 2 * LATER


def test_action_and_policies_can_be_replaced(
    store: Store, schedule: Schedule, now: datetime
) -> None:
    action = HttpAction(url="https://example.org/report", method="POST", body="{}")
    policies = Policies(retries=3, jitter=timedelta(seconds=5))
    updated = store.update_schedule(schedule.id, now=now, action=action, policies=policies)
    assert (updated.action, updated.policies) == (action, policies)
    assert store.get_schedule(schedule.id) == updated


def test_deleting_a_schedule_takes_its_runs_and_their_logs(
    store: Store, schedule: Schedule, now: datetime, tmp_path: Path
) -> None:
    other = store.create_schedule("other", "* * * * *", "UTC", CommandAction(), now=now)
    mine = store.record_manual_run(schedule.id, now)
    theirs = store.record_manual_run(other.id, now)
    log = store.log_path_for(mine)
    log.write_text("output")
    outside = tmp_path / "not-ours.log"
    outside.write_text("keep me")
    store.start_run(mine, now, log)
    store.finish_run(mine, status=RunStatus.succeeded, finished_at=now)
    stray = store.record_manual_run(schedule.id, now)
    store.start_run(stray, now, outside)

    store.delete_schedule(schedule.id)

    assert [s.id for s in store.list_schedules()] == [other.id]
    assert [run.id for run in store.runs()] == [theirs]
    assert not log.exists()
    assert outside.read_text() == "keep me"


def test_a_schedule_whose_json_does_not_decode_is_named_and_can_be_repaired(
    store: Store, schedule: Schedule, now: datetime, sql: Sql
) -> None:
    healthy = store.create_schedule("fine", "* * * * *", "UTC", CommandAction(), now=now)
    sql('UPDATE schedules SET action = \'{"v": 1, "kind": "telegram"\' WHERE id = ?', schedule.id)

    with pytest.raises(StoreError, match=f"schedule {schedule.id} .*cannot be read"):
        store.get_schedule(schedule.id)
    assert store.list_schedules() == [healthy]  # one bad row does not hide the others
    readable, broken = store.read_schedules()
    assert readable == [healthy]
    assert list(broken) == [schedule.id] and "cannot be read" in broken[schedule.id]
    assert store.get_schedule(healthy.id) == healthy

    repaired = store.update_schedule(schedule.id, now=now, action=CommandAction(argv=("true",)))
    assert repaired.action == CommandAction(argv=("true",))
    assert len(store.list_schedules()) == 2


def test_a_schedule_from_a_newer_release_is_refused_by_name(
    store: Store, schedule: Schedule, sql: Sql
) -> None:
    sql("UPDATE schedules SET policies = '{\"v\": 7}' WHERE id = ?", schedule.id)
    with pytest.raises(StoreError, match="newer domi-desktop"):
        store.get_schedule(schedule.id)
    store.delete_schedule(schedule.id)
    assert store.list_schedules() == []


def test_a_secret_is_stored_as_its_name_only(store: Store, schedule: Schedule, sql: Sql) -> None:
    [(stored,)] = sql("SELECT action FROM schedules WHERE id = ?", schedule.id)
    assert '["TOKEN", "api"]' in str(stored)


def test_naive_datetimes_are_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="naive"):
        store.create_schedule("x", "* * * * *", "UTC", CommandAction(), now=datetime(2026, 1, 1))


def test_setting_last_due_back_is_a_compare_and_set_on_both_backends(
    store: Store, now: datetime
) -> None:
    schedule = store.create_schedule(
        "x", "* * * * *", "UTC", CommandAction(argv=("true",)), Policies(), now=now
    )
    earlier = now - timedelta(hours=1)
    assert not store.rebase_last_due(schedule.id, now + timedelta(minutes=1), earlier)
    assert store.get_schedule(schedule.id).last_due == now
    assert store.rebase_last_due(schedule.id, now, earlier)
    assert store.get_schedule(schedule.id).last_due == earlier


def test_an_import_makes_every_schedule_in_one_go_and_the_same_key_makes_nothing_again(
    store: Store, now: datetime
) -> None:
    imported = [
        Schedule(0, f"job {n}", "*/5 * * * *", "UTC", CommandAction(argv=("true",)),
                 enabled=n % 2 == 0, notes=f"note {n}")
        for n in range(50)
    ]  # fmt: skip
    made, existing = store.import_schedules(imported, "digest-1", now=now)
    assert not existing
    assert [(s.name, s.enabled, s.notes, s.last_due) for s in made] == [
        (f"job {n}", n % 2 == 0, f"note {n}", now) for n in range(50)
    ]
    assert [s.id for s in made] == sorted(s.id for s in made)
    assert store.get_schedule(made[7].id) == made[7]
    again, existing = store.import_schedules(imported, "digest-1", now=now)
    assert existing and [s.id for s in again] == [s.id for s in made]
    assert len(store.list_schedules()) == 50
