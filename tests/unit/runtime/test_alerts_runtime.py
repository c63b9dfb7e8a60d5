# ruff: noqa: F811  (the fixtures are imported from test_conditions_runtime)
"""Alerts at the runtime: alerts, bursts, keeping awake and the network gate, on a fake clock
with real processes (and a real local HTTP server)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from functools import partial
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.events import RunFinished
from domi_desktop.model import (
    Alerts,
    CatchUp,
    Conditions,
    HttpAction,
    NetworkState,
    OnDeadline,
    RunStatus,
    SystemState,
    WakeReason,
)
from tests.support.runtime import RuntimeHarness
from tests.unit.runtime.test_conditions_runtime import MAINS, cmd, make, store  # noqa: F401

FIVE_MIN = "*/5 * * * *"


def failing_job(tmp_path: Path) -> tuple[Any, Path]:
    """Exits with the message in ``message`` (none: succeeds)."""
    message = tmp_path / "message"
    script = (
        f"import pathlib, sys\np = pathlib.Path({str(message)!r})\n"
        "sys.exit(p.read_text() if p.exists() else 0)"
    )
    return cmd(script), message


def run_times(h: RuntimeHarness, count: int) -> None:
    """``count`` fires, five minutes apart, each finished before the next."""
    for _ in range(count):
        before = len(h.kinds("run.finished"))
        h.loop.advance(timedelta(minutes=5))
        h.drain_until(partial(finished_more, h, before))


def finished_more(h: RuntimeHarness, before: int) -> bool:
    return len(h.kinds("run.finished")) > before


def test_12_same_failures_a_success_and_a_new_failure_are_exactly_3_notifications(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make()
    action, message = failing_job(tmp_path)
    h.add(FIVE_MIN, action)
    h.start()
    message.write_text("disk full")
    run_times(h, 12)
    message.unlink()
    run_times(h, 1)
    message.write_text("no route to host")
    run_times(h, 1)
    notices = [(e.notice, e.reason) for e in h.kinds("schedule.alert")]
    assert notices == [
        ("failing", "exit code 1"),
        ("recovered", None),
        ("failing", "exit code 1"),
    ]
    assert [e.alerted for e in h.kinds("run.finished")] == [True] + [False] * 11 + [True, True]


def always_failing_paused_after_3(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> tuple[RuntimeHarness, Any]:
    """A harness with one schedule whose job always fails, paused by its alerts after 3."""
    h = make()
    action, message = failing_job(tmp_path)
    message.write_text("boom")
    return h, h.add(FIVE_MIN, action, alerts=Alerts(auto_pause_after=3))


def test_auto_pause_after_k_failures_disables_the_schedule_with_one_notice(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h, job = always_failing_paused_after_3(make, tmp_path)
    h.start()
    run_times(h, 3)
    h.loop.advance(timedelta(minutes=30))
    h.drain_until(lambda: True)
    assert [e.notice for e in h.kinds("schedule.alert")] == ["failing", "paused"]
    assert not h.store.get_schedule(job.id).enabled
    assert len(h.store.runs(schedule_id=job.id)) == 3


def test_a_4_day_jump_is_exactly_one_staleness_notice(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(alerts=Alerts(stale_after=timedelta(days=1)))
    action, message = failing_job(tmp_path)
    message.write_text("down")
    h.add("0 9 * * *", action, catch_up=CatchUp.skip)
    h.start()
    h.clock.sleep_machine(timedelta(days=4))
    h.wake(WakeReason.resume)
    h.loop.advance(timedelta(hours=2))
    stale = [e for e in h.kinds("schedule.alert") if e.notice == "stale"]
    assert len(stale) == 1 and stale[0].stale_for >= timedelta(days=4)


def test_200_schedules_after_a_12_hour_sleep_run_once_each_never_more_than_k_at_once(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(burst=4)
    live, seen = tmp_path / "live", tmp_path / "seen"
    live.mkdir()
    seen.mkdir()
    # Each job counts the jobs alive beside it (itself included) while it runs; by a name of its
    # own, not its pid, which Windows gives again at once.
    script = (
        f"import pathlib, time, uuid\nlive, seen = pathlib.Path({str(live)!r}), "
        f"pathlib.Path({str(seen)!r})\nme = live / uuid.uuid4().hex\nme.touch()\n"
        "time.sleep(0.05)\n(seen / me.name).write_text(str(len(list(live.iterdir()))))\n"
        "me.unlink()"
    )
    start = h.clock.now()
    jobs = [
        h.add(f"{i % 60} {10 + i // 60} * * *", cmd(script), name=f"job {i}", last_due=start)
        for i in range(1, 201)
    ]
    h.start()
    h.clock.sleep_machine(timedelta(hours=12))
    h.wake(WakeReason.resume)
    h.drain_until(lambda: len(h.kinds("run.finished")) >= 200, timeout=120)
    runs = [r for job in jobs for r in h.store.runs(schedule_id=job.id)]
    ran = [r for r in runs if r.status is RunStatus.succeeded]
    assert len(ran) == 200 and len({r.schedule_id for r in ran}) == 200
    assert all(r.late for r in ran)
    alive = [int(path.read_text()) for path in seen.iterdir()]
    assert len(alive) == 200 and max(alive) <= 4
    assert [(e.total, e.limit) for e in h.kinds("catch_up.burst")] == [(200, 4)]


# -- keeping awake -------------------------------------------------------------------------------


def test_the_inhibitor_is_held_exactly_while_the_job_runs(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make()
    go = tmp_path / "go"
    script = f"import pathlib, time\nwhile not pathlib.Path({str(go)!r}).exists(): time.sleep(0.02)"
    h.add("0 11 * * *", cmd(script), conditions=Conditions(keep_awake=True), name="Backup")
    h.start()
    assert h.inhibitor.held == 0
    h.loop.advance(timedelta(hours=1))
    h.drain_until(lambda: h.runtime.running_runs() != [])
    assert h.inhibitor.held == 1 and h.inhibitor.acquired == ["Backup is running"]
    go.write_text("")
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert h.inhibitor.held == 0


def test_the_inhibitor_is_released_on_a_timeout_kill_and_on_quit(
    make: Callable[..., RuntimeHarness],
) -> None:
    h = make()
    sleeper = cmd("import time; time.sleep(60)")
    h.add("0 11 * * *", sleeper, conditions=Conditions(keep_awake=True),
          timeout=timedelta(seconds=0.5))  # fmt: skip
    h.add("0 11 * * *", sleeper, conditions=Conditions(keep_awake=True), name="long")
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.drain_until(lambda: h.inhibitor.held == 2)
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert h.kinds("run.finished")[0].status is RunStatus.timed_out
    assert h.inhibitor.held == 1
    h.runtime.stop(wait=10)
    assert h.inhibitor.held == 0


# -- the network -------------------------------------------------------------------------------


class Counter(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    Counter.hits = 0
    httpd = HTTPServer(("127.0.0.1", 0), Counter)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


OFFLINE = SystemState(network=NetworkState.offline)
ONLINE = SystemState(network=NetworkState.online)


def test_no_request_while_offline_and_the_start_within_2_s_of_the_network(
    make: Callable[..., RuntimeHarness], server: HTTPServer
) -> None:
    h = make(OFFLINE)
    url = f"http://127.0.0.1:{server.server_address[1]}/ping"
    job = h.add("0 11 * * *", HttpAction(url=url))
    h.start()
    h.loop.advance(timedelta(hours=2))
    assert Counter.hits == 0
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting and run.reason == "waiting for the network"
    h.source.change(ONLINE)
    h.drain_until(lambda: Counter.hits == 1)  # on the change: the clock stands still meanwhile
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert h.store.get_run(run.id).status is RunStatus.succeeded


def test_without_the_gate_the_same_run_fails_offline(make: Callable[..., RuntimeHarness]) -> None:
    h = make(OFFLINE)
    job = h.add("0 11 * * *", HttpAction(url="http://127.0.0.1:9/ping", timeout=2.0),
                conditions=Conditions(requires_network=False))  # fmt: skip
    h.start()
    h.loop.advance(timedelta(hours=1))
    h.drain_until(lambda: bool(h.kinds("run.finished")))
    assert [r.status for r in h.store.runs(schedule_id=job.id)] == [RunStatus.failed]


def test_a_network_wait_that_times_out_is_one_run_and_at_most_one_notice(
    make: Callable[..., RuntimeHarness], server: HTTPServer
) -> None:
    h = make(OFFLINE)
    url = f"http://127.0.0.1:{server.server_address[1]}/ping"
    job = h.add("0 11 * * *", HttpAction(url=url), conditions=Conditions(
        wait_at_most=timedelta(hours=1), on_deadline=OnDeadline.skip))  # fmt: skip
    h.start()
    h.loop.advance(timedelta(hours=3))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.skipped
    assert run.reason == "skipped after waiting 1 hour for the network"
    assert Counter.hits == 0 and len(h.kinds("schedule.alert")) <= 1


def test_a_failing_streak_from_before_a_restart_counts_toward_the_auto_pause(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h, job = always_failing_paused_after_3(make, tmp_path)
    before = h.clock.now() - timedelta(hours=1)
    for status in (RunStatus.failed, RunStatus.succeeded, RunStatus.failed, RunStatus.failed):
        run_id = h.store.record_manual_run(job.id, before)
        h.store.finish_run(
            run_id, status=status, finished_at=before, exit_code=None, reason="exit code 1"
        )
    h.start()
    run_times(h, 1)
    assert [e.notice for e in h.kinds("schedule.alert")] == ["paused"]
    assert not h.store.get_schedule(job.id).enabled


def test_the_alert_states_of_a_batch_of_results_are_read_in_one_query(
    make: Callable[..., RuntimeHarness], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make()
    action, _message = failing_job(tmp_path)
    jobs = [h.add(FIVE_MIN, action, alerts=Alerts(auto_pause_after=3)) for _ in range(3)]
    before = h.clock.now() - timedelta(hours=1)
    events = []
    for job in jobs:
        for _ in range(3):
            run_id = h.store.record_manual_run(job.id, before)
            h.store.finish_run(
                run_id, status=RunStatus.failed, finished_at=before, exit_code=1,
                reason="exit code 1",
            )  # fmt: skip
        events.append(
            RunFinished(
                run_id=run_id, schedule_id=job.id, name=job.name, status=RunStatus.failed,
                reason="exit code 1", exit_code=1, duration=timedelta(seconds=1),
            )
        )  # fmt: skip
    h.start()
    calls: list[list[int]] = []
    read = h.store.failures_since_success

    def counted(ids: Any, **options: Any) -> Any:
        calls.append(sorted(ids))
        return read(ids, **options)

    monkeypatch.setattr(h.store, "failures_since_success", counted)
    keeper = h.runtime.alerts
    keeper.read_alert_states(events)
    notices = [[alert.notice for alert in keeper.observe(event)] for event in events]
    assert calls == [sorted(job.id for job in jobs)]
    # Each state holds the two failures before the one observed (left out of the read): paused.
    assert notices == [["paused"]] * 3
