"""The monitor against a local Healthchecks over real HTTP on loopback: checks made from the
schedule, pings with run ids and the masked output, pauses, the heartbeat, a webhook, and a
monitor that cannot be reached (queued, retried, nothing lost, also across a restart)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any, ClassVar

import pytest

from domi_desktop.events import FireEvent, RunFinished
from domi_desktop.model import (
    CommandAction,
    Monitor,
    Policies,
    RunStatus,
    Schedule,
    SkipReason,
    Trigger,
)
from domi_desktop.monitor import Monitoring, MonitorSettings, run_uuid
from domi_desktop.secrets import MemorySecretStore
from tests.support.fakes import FakeClock, wait_for
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks

API_KEY = "hcw_test_api_key_0123456789abcdef"
JOB_SECRET = "s3cret-token-of-the-job"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
WAIT = 60.0
"""A deadline for the worker's deliveries only a hang reaches: Windows' CPython under Wine on a
loaded machine took longer than 10 s (make test-windows)."""


@pytest.fixture
def hc() -> Iterator[FakeHealthchecks]:
    with FakeHealthchecks(API_KEY) as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


def _monitoring(
    tmp_path: Path,
    clock: FakeClock,
    outputs: dict[int, str] | None = None,
    settings: MonitorSettings | None = None,
) -> Monitoring:
    return Monitoring(
        tmp_path / "data",
        machine="laptop",
        seed="store-1",
        secrets=MemorySecretStore({"hc-key": API_KEY}),
        clock=clock,
        output_of=(outputs or {}).get,
        local_zone=lambda: "Europe/Berlin",
        settings=settings or MonitorSettings(),
    )


def _schedule(hc: FakeHealthchecks, *, key: bool = True, **monitor: Any) -> Schedule:
    if key:
        monitor.update(healthchecks_key="hc-key", healthchecks_api=hc.url)
    return Schedule(
        7,
        "Backup",
        "0 9 * * mon-fri",
        "local",
        CommandAction(argv=("/bin/true",)),
        policies=Policies(monitor=Monitor(**monitor)),
    )


def _fire(run_id: int = 41, **changes: Any) -> FireEvent:
    values: dict[str, Any] = {
        "schedule_id": 7, "run_id": run_id, "name": "Backup", "tz": "local",
        "due": NOW, "fired_at": NOW, "trigger": Trigger.scheduled,
    }  # fmt: skip
    values.update(changes)
    return FireEvent(**values)


def _finished(
    run_id: int = 41, status: RunStatus = RunStatus.succeeded, code: int | None = 0
) -> RunFinished:
    return RunFinished(run_id, 7, "Backup", status, None, code, timedelta(seconds=3))


def _pings(hc: FakeHealthchecks) -> list[tuple[str, str, str]]:
    return [
        (method, target, body.decode())
        for method, target, _headers, body in hc.requests
        if target.startswith("/ping/")
    ]


def test_the_check_is_made_from_the_schedule_and_kept_equal_to_it(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc, grace=timedelta(minutes=20))
        monitoring.sync([schedule])
        assert monitoring.worker.drained(WAIT)
        check = hc.by_name("Backup (domi #7)")
        assert (check.schedule, check.tz, check.grace) == (
            "0 9 * * 1-5", "Europe/Berlin", timedelta(minutes=20)
        )  # fmt: skip
        assert check.channels == "*"  # a new check alerts through the project's integrations
        edited = Schedule(7, "Backup", "30 8 * * *", "Asia/Tokyo", schedule.action,
                          policies=schedule.policies)  # fmt: skip
        monitoring.sync([edited])
        assert monitoring.worker.drained(WAIT)
        assert len(hc.checks) == 1  # updated in place (unique name), not a second check
        assert (check.schedule, check.tz) == ("30 8 * * *", "Asia/Tokyo")
        monitoring.sync([edited])  # unchanged: nothing sent again
        assert monitoring.worker.drained(WAIT)
        assert sum(1 for r in hc.requests if r[1] == "/api/v3/checks/") == 2
    finally:
        monitoring.stop()


def test_a_check_already_there_keeps_the_integrations_its_user_chose(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    mine = hc.add_check("Backup (domi #7)", schedule="0 1 * * *", channels="abc-email-only")
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        monitoring.sync([_schedule(hc)])
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    assert list(hc.checks.values()) == [mine]
    assert (mine.schedule, mine.channels) == ("0 9 * * 1-5", "abc-email-only")


def test_a_run_pings_start_and_its_exit_code_with_its_rid_and_masked_output(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    output = f"backing up\ntoken=*** (masked by the runner)\nkey {API_KEY} leaked by the job\n"
    monitoring = _monitoring(tmp_path, clock, {41: output, 42: "disk full\n"})
    monitoring.start()
    try:
        schedule = _schedule(hc)
        monitoring.observe(_fire(41), schedule)
        monitoring.observe(_finished(41), schedule)
        monitoring.observe(_fire(42), schedule)
        monitoring.observe(_finished(42, RunStatus.failed, 3), schedule)
        monitoring.observe(_finished(43, RunStatus.timed_out, None), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    check = hc.by_name("Backup (domi #7)")
    rid41, rid42 = run_uuid("store-1", 41), run_uuid("store-1", 42)
    assert [(p.kind, p.rid, p.exitstatus) for p in check.pings] == [
        ("start", rid41, None), ("success", rid41, 0),
        ("start", rid42, None), ("fail", rid42, 3),
        ("fail", run_uuid("store-1", 43), None),
    ]  # fmt: skip
    assert "backing up" in check.pings[1].body and "disk full" in check.pings[3].body
    assert check.status == "down"
    # The API key is sent in its header only: never in a ping, a body or the log.
    for _method, target, headers, body in hc.requests:
        assert API_KEY not in target and API_KEY.encode() not in body
        assert headers.get("x-api-key") in (None, API_KEY)
    assert API_KEY not in caplog.text and JOB_SECRET not in caplog.text
    assert "/ping/" not in caplog.text  # a ping URL is a credential of sorts


def test_missed_and_late_runs_are_logged_to_the_check(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc)
        late = _fire(50, due=NOW - timedelta(hours=1), late=True, missed_count=2,
                     trigger=Trigger.catch_up)  # fmt: skip
        monitoring.observe(late, schedule)
        monitoring.observe(_fire(51, skipped=SkipReason.missed), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    pings = hc.by_name("Backup (domi #7)").pings
    assert [p.kind for p in pings] == ["log", "log", "start", "log"]
    assert "missed 2 run(s) while the machine was asleep or off" in pings[0].body
    assert pings[1].body.startswith("late by 1 h 00 min")
    assert pings[3].body.startswith("skipped (missed)")


def test_a_ping_url_alone_is_used_as_is(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    made = hc.add_check("mine", schedule="0 9 * * *")
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc, key=False, healthchecks_url=f"{hc.url}/ping/{made.code}")
        monitoring.observe(_fire(), schedule)
        monitoring.observe(_finished(), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    assert [p.kind for p in made.pings] == ["start", "success"]
    assert not any(r[1].startswith("/api/") for r in hc.requests)


def test_going_to_sleep_pauses_the_checks_and_the_next_ping_resumes_them(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    released: list[bool] = []
    try:
        schedule = _schedule(hc)
        monitoring.observe(_fire(), schedule)
        monitoring.observe(_finished(), schedule)
        monitoring.going_to_sleep([schedule], lambda: released.append(True), budget=WAIT)
        wait_for(lambda: released, WAIT, "the delay lock released")
        check = hc.by_name("Backup (domi #7)")
        assert check.status == "paused"
        monitoring.observe(_fire(60), schedule)
        monitoring.observe(_finished(60), schedule)
        assert monitoring.worker.drained(WAIT)
        assert check.status == "up"
    finally:
        monitoring.stop()


def test_the_heartbeat_check_is_a_period_check_per_machine_never_paused(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    settings = MonitorSettings(healthchecks_key="hc-key", healthchecks_api=hc.url,
                               heartbeat_period=timedelta(days=3))  # fmt: skip
    monitoring = _monitoring(tmp_path, clock, settings=settings)
    monitoring.start()
    try:
        assert monitoring.worker.drained(WAIT)
        heartbeat = hc.by_name("domi heartbeat: laptop")
        assert (heartbeat.schedule, heartbeat.timeout) == (None, timedelta(days=3))
        monitoring.tick()  # within ten minutes: no second ping
        clock.advance(timedelta(minutes=11))
        monitoring.tick()
        monitoring.going_to_sleep([_schedule(hc)], lambda: None)
        assert monitoring.worker.drained(WAIT)
        assert [p.kind for p in heartbeat.pings] == ["success", "success"]
        assert heartbeat.status == "up"
    finally:
        monitoring.stop()


def test_an_unreachable_monitor_loses_nothing_and_keeps_the_order(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    hc.unreachable = True
    first = _monitoring(tmp_path, clock, {n: f"run {n}" for n in range(1, 6)})
    first.start()
    try:
        schedule = _schedule(hc)
        for run_id in range(1, 6):
            first.observe(_fire(run_id), schedule)
            first.observe(_finished(run_id), schedule)
        wait_for(lambda: len(hc.requests) >= 2, WAIT, "a retry")
        assert not first.worker.drained(0.2)
    finally:
        first.stop()  # the app quits while the monitor is away: the spool keeps every ping
    hc.unreachable = False
    second = _monitoring(tmp_path, clock)
    second.start()
    try:
        assert second.worker.drained(WAIT)
    finally:
        second.stop()
    pings = hc.by_name("Backup (domi #7)").pings
    assert [(p.kind, p.rid) for p in pings] == [
        (kind, run_uuid("store-1", n)) for n in range(1, 6) for kind in ("start", "success")
    ]
    assert [p.body for p in pings if p.kind == "success"] == [f"run {n}" for n in range(1, 6)]


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        _Hook.received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_webhook_gets_start_success_and_failure_as_json_masked(
    tmp_path: Path, clock: FakeClock, hc: FakeHealthchecks
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    Thread(target=server.serve_forever, daemon=True).start()
    _Hook.received = []
    monitoring = _monitoring(tmp_path, clock, {1: "ok", 2: f"failed with {API_KEY}"})
    monitoring.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        schedule = _schedule(hc, webhook=url)
        monitoring.observe(_fire(1), schedule)
        monitoring.observe(_finished(1), schedule)
        monitoring.observe(_finished(2, RunStatus.failed, 2), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
        server.shutdown()
        server.server_close()
    assert [h["event"] for h in _Hook.received] == ["start", "success", "failure"]
    assert _Hook.received[1]["output"] == "ok"
    assert _Hook.received[2]["exit_code"] == 2
    assert _Hook.received[2]["output"] == "failed with ***"
    assert _Hook.received[0]["rid"] == run_uuid("store-1", 1)


def test_a_check_deleted_in_healthchecks_is_made_again_and_the_ping_not_lost(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc)
        monitoring.observe(_fire(1), schedule)
        assert monitoring.worker.drained(WAIT)
        with hc.lock:
            hc.checks.clear()  # the user deleted it in the web UI
        monitoring.observe(_finished(1), schedule)
        monitoring.going_to_sleep([schedule], lambda: None)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    again = hc.by_name("Backup (domi #7)")
    assert [p.kind for p in again.pings] == ["success"]
    assert again.status == "paused"


def test_a_damaged_spool_or_check_list_never_stops_the_monitor(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "monitor-spool.json").write_text(
        '[{"kind": "ping", "signal": "0"}, {"kind": "webhook"}, {"kind": "pause"},'
        ' {"kind": "sync", "check": {"api": 1}}, {"kind": 3}, 7, null, "x"]'
    )
    (data / "monitor-checks.json").write_text('{"x": {"ping_url": 1}}')
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc)
        monitoring.observe(_fire(1), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    assert [p.kind for p in hc.by_name("Backup (domi #7)").pings] == ["start"]


def test_pauses_that_could_not_go_before_the_sleep_are_never_sent(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    released: list[bool] = []
    try:
        schedule = _schedule(hc)
        monitoring.observe(_fire(1), schedule)
        monitoring.observe(_finished(1), schedule)
        assert monitoring.worker.drained(WAIT)
        hc.unreachable = True  # the Wi-Fi went first
        monitoring.going_to_sleep([schedule], lambda: released.append(True), budget=0.5)
        wait_for(lambda: released, WAIT, "the delay lock let go after its budget")
        # The network is back before the app hears of the wake (on a loaded machine, the
        # worker's retry came between the two): the retry finds nothing to send.
        hc.unreachable = False
        assert monitoring.worker.drained(WAIT)
        assert "paused" not in [flip.new for flip in hc.by_name("Backup (domi #7)").flips]
        monitoring.woke()
        monitoring.observe(_fire(2), schedule)
        monitoring.observe(_finished(2), schedule)
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    check = hc.by_name("Backup (domi #7)")
    assert check.status == "up"
    assert "paused" not in [flip.new for flip in check.flips]
    assert [p.kind for p in check.pings] == ["start", "success", "start", "success"]
