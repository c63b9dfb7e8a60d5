"""The runtime with a real SQLite store, real processes, a fake clock: fires end to end."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.errors import BusyError
from domi_desktop.model import (
    CommandAction,
    Overlap,
    RunStatus,
    Schedule,
    Trigger,
)
from domi_desktop.runtime.lanes import REPLACED
from domi_desktop.store import Store
from tests.support.fakes import wait_for
from tests.support.runtime import START, RuntimeHarness, harnesses


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


@pytest.fixture
def harness(store: Store) -> Iterator[RuntimeHarness]:
    with harnesses(store, secrets={"API_TOKEN": "s3cr3t-token"}) as make:
        yield make()


def add(
    h: RuntimeHarness, expr: str, argv: tuple[str, ...], *, last_due: datetime, **policies: Any
) -> Schedule:
    """A command whose environment carries a secret as ``TOKEN``."""
    action = CommandAction(argv=argv, secret_env=(("TOKEN", "API_TOKEN"),))
    return h.add(expr, action, last_due=last_due, **policies)


PY = sys.executable


def test_three_days_asleep_runs_once_late_and_records_two_skipped(harness: RuntimeHarness) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "import os; print('token', os.environ['TOKEN'])"),
                           last_due=datetime(2024, 6, 2, 9, 0, tzinfo=UTC))  # fmt: skip
    harness.start()
    harness.finished(1)
    runs = harness.store.runs(schedule_id=schedule.id)
    fire = runs[0]
    assert fire.status is RunStatus.succeeded
    assert fire.late and fire.trigger is Trigger.catch_up and fire.missed_count == 2
    assert fire.due == datetime(2024, 6, 5, 9, 0, tzinfo=UTC)
    assert "token ***" in (fire.output_tail or "")
    assert "s3cr3t" not in Path(fire.log_path or "").read_text()
    skipped = [r for r in runs if r.status is RunStatus.skipped]
    assert [r.due for r in skipped] == [
        datetime(2024, 6, 4, 9, 0, tzinfo=UTC),
        datetime(2024, 6, 3, 9, 0, tzinfo=UTC),
    ]
    assert all(r.reason == "missed" for r in skipped)
    assert harness.store.get_schedule(schedule.id).last_due == fire.due
    (fired,) = [e.to_json() for e in harness.kinds("schedule.fire")]
    assert fired["late"] and fired["missed_count"] == 2 and fired["trigger"] == "catch_up"
    (done,) = [e.to_json() for e in harness.kinds("run.finished")]
    assert done["status"] == "succeeded" and done["exit_code"] == 0


def test_a_fire_while_busy_is_skipped_busy_by_default(harness: RuntimeHarness) -> None:
    schedule = add(harness, "* * * * *", (PY, "-c", "import time; time.sleep(30)"), last_due=START)
    harness.start()
    harness.loop.advance(timedelta(minutes=2))
    runs = harness.store.runs(schedule_id=schedule.id)
    assert [r.status for r in runs] == [RunStatus.skipped, RunStatus.running]
    assert runs[0].reason == "busy"


def test_queue_starts_the_waiting_run_when_the_running_one_ends(
    harness: RuntimeHarness, tmp_path: Path
) -> None:
    marker = tmp_path / "go"
    script = (
        f"import pathlib, time\nwhile not pathlib.Path({str(marker)!r}).exists(): time.sleep(0.02)"
    )
    schedule = add(harness, "* * * * *", (PY, "-c", script), last_due=START, overlap=Overlap.queue)
    harness.start()
    harness.loop.advance(timedelta(minutes=3))
    statuses = [r.status for r in harness.store.runs(schedule_id=schedule.id)]
    assert statuses == [
        RunStatus.skipped,
        RunStatus.running,
        RunStatus.running,
    ]  # one waits, one more is busy
    marker.write_text("")
    harness.finished(2)
    runs = harness.store.runs(schedule_id=schedule.id)
    assert [r.status for r in runs] == [RunStatus.skipped, RunStatus.succeeded, RunStatus.succeeded]


def test_quitting_records_a_waiting_run_as_interrupted(
    harness: RuntimeHarness, tmp_path: Path
) -> None:
    schedule = add(harness, "* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.queue)  # fmt: skip
    harness.start()
    harness.loop.advance(timedelta(minutes=2))
    harness.runtime.stop(wait=10)
    runs = harness.store.runs(schedule_id=schedule.id)
    assert [r.status for r in runs] == [RunStatus.interrupted, RunStatus.interrupted]
    assert runs[0].reason == "stopped: domi-desktop quit before it started"
    assert runs[0].started_at is None


def test_replace_stops_the_running_one(harness: RuntimeHarness) -> None:
    schedule = add(harness, "* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.replace)  # fmt: skip
    harness.start()
    harness.loop.advance(timedelta(minutes=2))
    harness.finished(1)
    first, second = sorted(harness.store.runs(schedule_id=schedule.id), key=lambda r: r.id)
    assert first.status is RunStatus.interrupted and first.reason == REPLACED
    assert second.status is RunStatus.running


def test_parallel_runs_side_by_side(harness: RuntimeHarness) -> None:
    schedule = add(harness, "* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.parallel)  # fmt: skip
    harness.start()
    harness.loop.advance(timedelta(minutes=2))
    assert [r.status for r in harness.store.runs(schedule_id=schedule.id)] == [
        RunStatus.running
    ] * 2
    assert len(harness.runtime.running_runs()) == 2


def test_retries_back_off_and_end_failed(harness: RuntimeHarness) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "import sys; sys.exit(3)"),
                           last_due=datetime(2024, 6, 4, 9, 0, tzinfo=UTC), retries=2,
                           retry_backoff=timedelta(seconds=10))  # fmt: skip
    harness.start()
    harness.drain_until(lambda: len(harness.loop.pending()) >= 2)  # wake timer + first retry
    harness.loop.advance(timedelta(seconds=10))
    harness.drain_until(lambda: len(harness.loop.pending()) >= 2)
    harness.loop.advance(timedelta(seconds=20))
    harness.finished(1)
    (run,) = harness.store.runs(schedule_id=schedule.id)
    assert run.status is RunStatus.failed and run.exit_code == 3 and run.attempt == 2


def test_run_now_is_manual_and_leaves_last_due_alone(harness: RuntimeHarness) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "print('hi')"), last_due=START)
    harness.start()
    run_id = harness.run_now(schedule.id)
    harness.finished(1)
    run = harness.store.get_run(run_id)
    assert run.trigger is Trigger.manual and run.status is RunStatus.succeeded
    assert harness.store.get_schedule(schedule.id).last_due == START


def test_a_missing_secret_fails_the_run_with_the_reason(harness: RuntimeHarness) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "print('hi')"), last_due=START)
    harness.secrets.delete("API_TOKEN")
    run_id = harness.run_now(schedule.id)
    harness.finished(1)
    run = harness.store.get_run(run_id)
    assert run.status is RunStatus.failed
    assert (run.reason or "").startswith("secret unavailable")


def test_stop_interrupts_running_jobs_with_a_reason(harness: RuntimeHarness) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    run_id = harness.run_now(schedule.id)
    harness.runtime.stop(wait=10)
    run = harness.store.get_run(run_id)
    assert run.status is RunStatus.interrupted
    assert "quit" in (run.reason or "")


def _job_row(store: Store, run_id: int) -> tuple[object, ...]:
    from domi_desktop.store.models import RunRow

    row = RunRow.get_by_id(run_id)
    return row.job_pid, row.job_started


def test_the_jobs_pid_and_start_marker_are_on_record_while_it_runs(harness: RuntimeHarness) -> None:
    from domi_desktop.actions import identity

    schedule = add(harness, "0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    run_id = harness.run_now(schedule.id)
    wait_for(lambda: _job_row(harness.store, run_id)[0], 60, "the pid on record")
    recorded_pid, recorded_marker = _job_row(harness.store, run_id)
    # Read while the job lives: a dead pid has no start marker to compare.
    assert recorded_marker == identity.start_marker(recorded_pid)
    [active] = harness.runtime.runner.stop_all("done looking")
    assert active.pid == recorded_pid


@pytest.mark.posix_only  # POSIX sessions
def test_a_dead_apps_job_is_stopped_before_its_resumed_copy_starts(
    harness: RuntimeHarness, tmp_path: Path
) -> None:
    import subprocess

    from domi_desktop.actions import identity
    from domi_desktop.store.models import RunRow

    pids = tmp_path / "pids"
    schedule = add(harness, "0 9 * * *", ("/bin/sh", "-c", f"echo $$ >> {pids}; sleep 60"),
                           last_due=START)  # fmt: skip
    left = subprocess.Popen(["sleep", "60"], start_new_session=True)
    run_id = harness.store.record_manual_run(schedule.id, START)
    harness.store.record_job(run_id, left.pid, identity.start_marker(left.pid))
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True)
    RunRow.update(owner_pid=int(dead.stdout), owner_token="gone").where(
        RunRow.id == run_id
    ).execute()

    harness.start()

    assert left.wait(timeout=60) == -15  # SIGTERM, before start() returned
    orphan = harness.store.get_run(run_id)
    assert orphan.status is RunStatus.interrupted
    assert orphan.reason == "process died; stopped its leftover process tree (1 process)"
    [resumed] = [r for r in harness.store.runs(schedule_id=schedule.id) if r.id != run_id]
    assert resumed.trigger is Trigger.resumed and resumed.resumed_from == run_id


def test_run_now_on_a_running_job_whose_policy_is_skip_starts_nothing(
    harness: RuntimeHarness,
) -> None:
    schedule = add(harness, "0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    first = harness.run_now(schedule.id)
    with pytest.raises(BusyError, match="job is still running"):
        harness.run_now(schedule.id)
    assert harness.runtime.running_runs() == [first]
    assert [run.id for run in harness.store.runs(schedule_id=schedule.id)] == [first]


def test_run_now_on_a_running_parallel_job_runs_beside_it(harness: RuntimeHarness) -> None:
    schedule = add(harness,
        "0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
        overlap=Overlap.parallel,
    )  # fmt: skip
    first = harness.run_now(schedule.id)
    second = harness.run_now(schedule.id)
    assert harness.runtime.running_runs() == [first, second]
