"""What the alerts' state of many schedules is made of, read in one query (on both backends, as
every store test)."""

from __future__ import annotations

from datetime import datetime, timedelta

from domi_desktop.model import CommandAction, RunStatus
from domi_desktop.store import Store


def test_each_schedules_failures_after_its_latest_success_newest_first(
    store: Store, now: datetime
) -> None:
    histories = {
        "recovered then failed twice": ["failed", "succeeded", "timed_out", "failed"],
        "never succeeded": ["failed", "failed", "failed"],
        "fine": ["failed", "succeeded"],
        "nothing yet": [],
    }
    ids: dict[str, int] = {}
    last_run: dict[str, int] = {}
    for name, history in histories.items():
        schedule = store.create_schedule(name, "* * * * *", "UTC", CommandAction(), now=now)
        ids[name] = schedule.id
        for minute, status in enumerate(history):
            at = now + timedelta(minutes=minute)
            last_run[name] = store.record_manual_run(schedule.id, at)
            store.finish_run(
                last_run[name], status=RunStatus(status), finished_at=at, reason=f"{name} {minute}"
            )
    found = store.failures_since_success(ids.values())
    reasons = {name: [reason for _s, reason, _at in found[ids[name]]] for name in ids}
    assert reasons == {
        "recovered then failed twice": [
            "recovered then failed twice 3",
            "recovered then failed twice 2",
        ],
        "never succeeded": ["never succeeded 2", "never succeeded 1", "never succeeded 0"],
        "fine": [],
        "nothing yet": [],
    }
    statuses = [status for status, _r, _at in found[ids["recovered then failed twice"]]]
    assert statuses == [RunStatus.failed, RunStatus.timed_out]
    # The runs being observed are left out; the limit keeps the newest.
    left_out = store.failures_since_success(
        [ids["never succeeded"]], besides=[last_run["never succeeded"]], limit=1
    )
    assert [reason for _s, reason, _at in left_out[ids["never succeeded"]]] == ["never succeeded 1"]
