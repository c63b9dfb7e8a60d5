"""Issue 23's session triggers at the runtime: real SQLite, real processes, a fake clock."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.model import Overlap, RunStatus, SessionTriggers, Trigger
from domi_desktop.runtime.session import SessionRuns
from domi_desktop.store import Store
from tests.runtime.test_conditions_runtime import MAINS, Harness, cmd

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    store = Store.open(tmp_path / "data", now=START)
    made = Harness(store, MAINS)
    try:
        yield made
    finally:
        with contextlib.ExitStack() as stops:
            stops.callback(store.close)
            stops.callback(made.runtime.stop, wait=5)


def count_job(path: Path, seconds: float = 0.0) -> Any:
    return cmd(
        f"import pathlib, time\np = pathlib.Path({str(path)!r})\n"
        "p.write_text(str(int(p.read_text()) + 1) if p.exists() else '1')\n"
        f"time.sleep({seconds})"
    )


def finished(h: Harness, count: int) -> Callable[[], bool]:
    return lambda: len(h.kinds("run.finished")) >= count


def test_at_unlock_at_most_once_an_hour_recorded_with_its_trigger(
    harness: Harness, tmp_path: Path
) -> None:
    h = harness
    count = tmp_path / "count"
    job = h.add(
        "0 0 1 1 *", count_job(count),
        session=SessionTriggers(at_unlock=True, min_interval=HOUR),
    )  # fmt: skip
    other = h.add("0 0 1 1 *", count_job(tmp_path / "other"), name="other",
                  session=SessionTriggers(at_login=True))  # fmt: skip
    h.runtime.start()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(finished(h, 1))
    h.loop.advance(timedelta(minutes=30))
    assert triggers.fire(Trigger.unlock) == 0, "unlocked again within the hour"
    h.loop.advance(timedelta(minutes=31))
    assert triggers.fire(Trigger.unlock) == 1
    h.drain_until(finished(h, 2))
    runs = h.store.runs(schedule_id=job.id)
    assert [(r.trigger, r.status) for r in runs] == [(Trigger.unlock, RunStatus.succeeded)] * 2
    assert count.read_text() == "2"
    assert h.store.runs(schedule_id=other.id) == []

    # A new process reads when the trigger last fired from the record.
    again = SessionRuns(h.runtime)
    assert again.fire(Trigger.unlock) == 0


def test_a_trigger_follows_the_overlap_policy_and_a_refused_run_does_not_count(
    harness: Harness, tmp_path: Path
) -> None:
    h = harness
    job = h.add(
        "0 0 1 1 *", count_job(tmp_path / "count", seconds=30),
        session=SessionTriggers(on_resume=True, min_interval=HOUR), overlap=Overlap.skip,
    )  # fmt: skip
    h.runtime.start()
    h.runtime.run_now(job.id)
    h.drain_until(lambda: bool(h.runtime.running_runs()))
    (manual,) = h.runtime.running_runs()
    triggers = SessionRuns(h.runtime)
    assert triggers.fire(Trigger.resume) == 1
    h.drain_until(lambda: triggers.recording.get(Trigger.resume) == 0)
    assert len(h.store.runs(schedule_id=job.id)) == 1, "still running: no second copy"
    h.runtime.stop_run(manual, "stopped: test over")
    h.drain_until(finished(h, 1))
    assert triggers.fire(Trigger.resume) == 1, "the refused run did not use the hour up"
    h.drain_until(lambda: bool(triggers.running(Trigger.resume)))
    (resumed,) = triggers.running(Trigger.resume)
    assert h.store.get_run(resumed).trigger is Trigger.resume
    h.runtime.stop_run(resumed, "stopped: test over")
    h.drain_until(finished(h, 2))
    assert triggers.running(Trigger.resume) == []
