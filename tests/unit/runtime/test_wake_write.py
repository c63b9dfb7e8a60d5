"""A wake's started runs are launched as written only while their leases surely hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domi_desktop.runtime.catchup import WakeWrite

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=60)


def test_runs_started_with_the_claims_launch_as_written_only_soon_after() -> None:
    wrote = WakeWrite((1, 2, 3), frozenset({1, 2}), (), 3, 0.01, AT)
    soon = AT + timedelta(seconds=1)
    assert [wrote.leased_at(run_id, soon, LEASE) for run_id in (1, 2, 3)] == [AT, AT, None]
    # The loop stood still most of a lease (a frozen app): each start is written again, and
    # a run another machine took over meanwhile is not launched.
    assert wrote.leased_at(1, AT + timedelta(seconds=50), LEASE) is None
