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
    Policies,
    RunStatus,
    Schedule,
    Trigger,
)
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.lanes import REPLACED
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop, run_now, wait_for

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


class Harness:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.clock = FakeClock(START)
        self.loop = FakeLoop(self.clock)
        self.secrets = MemorySecretStore({"API_TOKEN": "s3cr3t-token"})
        self.runtime = Runtime(store, self.clock, self.loop, self.secrets)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.runtime.subscribe(lambda event: self.events.append((event.kind, event.to_json())))

    def add(
        self, expr: str, argv: tuple[str, ...], *, last_due: datetime, **policies: Any
    ) -> Schedule:
        schedule = self.store.create_schedule(
            "job", expr, "UTC", CommandAction(argv=argv, secret_env=(("TOKEN", "API_TOKEN"),)),
            Policies(**policies), now=last_due,
        )  # fmt: skip
        return schedule

    def finished(self, count: int) -> None:
        self.loop.drain(lambda: sum(1 for e in self.events if e[0] == "run.finished") >= count)

    def stop(self) -> None:
        self.runtime.stop(wait=5)


@pytest.fixture
def harness(store: Store) -> Iterator[Harness]:
    h = Harness(store)
    yield h
    h.stop()


PY = sys.executable


def test_three_days_asleep_runs_once_late_and_records_two_skipped(harness: Harness) -> None:
    schedule = harness.add("0 9 * * *", (PY, "-c", "import os; print('token', os.environ['TOKEN'])"),
                           last_due=datetime(2024, 6, 2, 9, 0, tzinfo=UTC))  # fmt: skip
    harness.runtime.start()
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
    (fired,) = [p for name, p in harness.events if name == "schedule.fire"]
    assert fired["late"] and fired["missed_count"] == 2 and fired["trigger"] == "catch_up"
    (done,) = [p for name, p in harness.events if name == "run.finished"]
    assert done["status"] == "succeeded" and done["exit_code"] == 0


def test_a_fire_while_busy_is_skipped_busy_by_default(harness: Harness) -> None:
    schedule = harness.add("* * * * *", (PY, "-c", "import time; time.sleep(30)"), last_due=START)
    harness.runtime.start()
    harness.loop.advance(timedelta(minutes=2))
    runs = harness.store.runs(schedule_id=schedule.id)
    assert [r.status for r in runs] == [RunStatus.skipped, RunStatus.running]
    assert runs[0].reason == "busy"


def test_queue_starts_the_waiting_run_when_the_running_one_ends(
    harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "go"
    script = (
        f"import pathlib, time\nwhile not pathlib.Path({str(marker)!r}).exists(): time.sleep(0.02)"
    )
    schedule = harness.add("* * * * *", (PY, "-c", script), last_due=START, overlap=Overlap.queue)
    harness.runtime.start()
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


def test_quitting_records_a_waiting_run_as_interrupted(harness: Harness, tmp_path: Path) -> None:
    schedule = harness.add("* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.queue)  # fmt: skip
    harness.runtime.start()
    harness.loop.advance(timedelta(minutes=2))
    harness.runtime.stop(wait=10)
    runs = harness.store.runs(schedule_id=schedule.id)
    assert [r.status for r in runs] == [RunStatus.interrupted, RunStatus.interrupted]
    assert runs[0].reason == "stopped: domi-desktop quit before it started"
    assert runs[0].started_at is None


def test_replace_stops_the_running_one(harness: Harness) -> None:
    schedule = harness.add("* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.replace)  # fmt: skip
    harness.runtime.start()
    harness.loop.advance(timedelta(minutes=2))
    harness.finished(1)
    first, second = sorted(harness.store.runs(schedule_id=schedule.id), key=lambda r: r.id)
    assert first.status is RunStatus.interrupted and first.reason == REPLACED
    assert second.status is RunStatus.running


def test_parallel_runs_side_by_side(harness: Harness) -> None:
    schedule = harness.add("* * * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
                           overlap=Overlap.parallel)  # fmt: skip
    harness.runtime.start()
    harness.loop.advance(timedelta(minutes=2))
    assert [r.status for r in harness.store.runs(schedule_id=schedule.id)] == [
        RunStatus.running
    ] * 2
    assert len(harness.runtime.running_runs()) == 2


def test_retries_back_off_and_end_failed(harness: Harness) -> None:
    schedule = harness.add("0 9 * * *", (PY, "-c", "import sys; sys.exit(3)"),
                           last_due=datetime(2024, 6, 4, 9, 0, tzinfo=UTC), retries=2,
                           retry_backoff=timedelta(seconds=10))  # fmt: skip
    harness.runtime.start()
    harness.loop.drain(lambda: len(harness.loop.pending()) >= 2)  # wake timer + first retry
    harness.loop.advance(timedelta(seconds=10))
    harness.loop.drain(lambda: len(harness.loop.pending()) >= 2)
    harness.loop.advance(timedelta(seconds=20))
    harness.finished(1)
    (run,) = harness.store.runs(schedule_id=schedule.id)
    assert run.status is RunStatus.failed and run.exit_code == 3 and run.attempt == 2


def test_run_now_is_manual_and_leaves_last_due_alone(harness: Harness) -> None:
    schedule = harness.add("0 9 * * *", (PY, "-c", "print('hi')"), last_due=START)
    harness.runtime.start()
    run_id = run_now(harness.runtime.run_now, schedule.id)
    harness.finished(1)
    run = harness.store.get_run(run_id)
    assert run.trigger is Trigger.manual and run.status is RunStatus.succeeded
    assert harness.store.get_schedule(schedule.id).last_due == START


def test_a_missing_secret_fails_the_run_with_the_reason(harness: Harness) -> None:
    schedule = harness.add("0 9 * * *", (PY, "-c", "print('hi')"), last_due=START)
    harness.secrets.delete("API_TOKEN")
    run_id = run_now(harness.runtime.run_now, schedule.id)
    harness.finished(1)
    run = harness.store.get_run(run_id)
    assert run.status is RunStatus.failed
    assert (run.reason or "").startswith("secret unavailable")


def test_stop_interrupts_running_jobs_with_a_reason(store: Store) -> None:
    harness = Harness(store)
    schedule = harness.add("0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    run_id = run_now(harness.runtime.run_now, schedule.id)
    harness.runtime.stop(wait=10)
    run = store.get_run(run_id)
    assert run.status is RunStatus.interrupted
    assert "quit" in (run.reason or "")


def _job_row(store: Store, run_id: int) -> tuple[object, ...]:
    from domi_desktop.store.models import RunRow

    row = RunRow.get_by_id(run_id)
    return row.job_pid, row.job_started


def test_the_jobs_pid_and_start_marker_are_on_record_while_it_runs(harness: Harness) -> None:
    from domi_desktop.actions import identity

    schedule = harness.add("0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    run_id = run_now(harness.runtime.run_now, schedule.id)
    wait_for(lambda: _job_row(harness.store, run_id)[0], 60, "the pid on record")
    recorded_pid, recorded_marker = _job_row(harness.store, run_id)
    # Read while the job lives: a dead pid has no start marker to compare.
    assert recorded_marker == identity.start_marker(recorded_pid)
    [active] = harness.runtime.runner.stop_all("done looking")
    assert active.pid == recorded_pid


@pytest.mark.posix_only  # POSIX sessions
def test_a_dead_apps_job_is_stopped_before_its_resumed_copy_starts(
    harness: Harness, tmp_path: Path
) -> None:
    import subprocess

    from domi_desktop.actions import identity
    from domi_desktop.store.models import RunRow

    pids = tmp_path / "pids"
    schedule = harness.add("0 9 * * *", ("/bin/sh", "-c", f"echo $$ >> {pids}; sleep 60"),
                           last_due=START)  # fmt: skip
    left = subprocess.Popen(["sleep", "60"], start_new_session=True)
    run_id = harness.store.record_manual_run(schedule.id, START)
    harness.store.record_job(run_id, left.pid, identity.start_marker(left.pid))
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True)
    RunRow.update(owner_pid=int(dead.stdout), owner_token="gone").where(
        RunRow.id == run_id
    ).execute()

    harness.runtime.start()

    assert left.wait(timeout=60) == -15  # SIGTERM, before start() returned
    orphan = harness.store.get_run(run_id)
    assert orphan.status is RunStatus.interrupted
    assert orphan.reason == "process died; stopped its leftover process tree (1 process)"
    [resumed] = [r for r in harness.store.runs(schedule_id=schedule.id) if r.id != run_id]
    assert resumed.trigger is Trigger.resumed and resumed.resumed_from == run_id


def test_run_now_on_a_running_job_whose_policy_is_skip_starts_nothing(harness: Harness) -> None:
    schedule = harness.add("0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START)
    first = run_now(harness.runtime.run_now, schedule.id)
    with pytest.raises(BusyError, match="job is still running"):
        run_now(harness.runtime.run_now, schedule.id)
    assert harness.runtime.running_runs() == [first]
    assert [run.id for run in harness.store.runs(schedule_id=schedule.id)] == [first]


def test_run_now_on_a_running_parallel_job_runs_beside_it(harness: Harness) -> None:
    schedule = harness.add(
        "0 9 * * *", (PY, "-c", "import time; time.sleep(60)"), last_due=START,
        overlap=Overlap.parallel,
    )  # fmt: skip
    first = run_now(harness.runtime.run_now, schedule.id)
    second = run_now(harness.runtime.run_now, schedule.id)
    assert harness.runtime.running_runs() == [first, second]
