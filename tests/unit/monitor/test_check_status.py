"""What the Monitoring box is told, against a local Healthchecks over real HTTP: each check's page,
its state and last ping as the deliveries left them, a test ping that reaches the check as a log
entry (its state unchanged), and a test ping to a monitor that is not there, said as an error."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from domi_desktop.model import RunStatus
from domi_desktop.monitor.status import CheckState, PingKind, PingTrial
from tests.support.fakes import FakeClock, wait_for
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks
from tests.unit.monitor.test_monitoring import WAIT, _finished, _fire, _monitoring, _schedule


def _test_ping(monitoring: object, schedule: object) -> PingTrial:
    answered: list[PingTrial] = []
    done = threading.Event()

    def told(result: PingTrial) -> None:
        answered.append(result)
        done.set()

    monitoring.test_ping(schedule, told)  # type: ignore[attr-defined]
    assert done.wait(WAIT), "the test ping was never answered"
    return answered[0]


def test_a_checks_page_state_and_last_ping_follow_its_deliveries(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc)
        (before,) = monitoring.status_of(schedule)
        assert (before.url, before.state, before.last_ping_at) == (None, CheckState.unknown, None)
        monitoring.sync([schedule])
        monitoring.observe(_fire(), schedule)
        monitoring.observe(_finished(status=RunStatus.failed, code=3), schedule)
        assert monitoring.worker.drained(WAIT)
        (status,) = monitoring.status_of(schedule)
        check = hc.by_name("Backup (domi #7)")
        assert status.url == f"{hc.url}/checks/{check.code}/details/"
        assert (status.state, status.last_ping_kind, status.last_error) == (
            CheckState.down, PingKind.failure, None
        )  # fmt: skip
        assert check.status == "down"  # as Healthchecks has it

        result = _test_ping(monitoring, schedule)
        assert (result.ok, result.status, result.state) == (True, 200, CheckState.down)
        assert check.pings[-1].kind == "log"
        assert check.pings[-1].body.startswith("test ping from domi-desktop on laptop")
        (after,) = monitoring.status_of(schedule)
        assert (after.state, after.last_ping_kind) == (CheckState.down, PingKind.test)
    finally:
        monitoring.stop()


def test_a_test_ping_to_a_monitor_that_is_not_there_says_why(
    tmp_path: Path, clock: FakeClock
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        nobody = f"http://127.0.0.1:{port}/ping/abc"  # nobody listens there
        schedule = _schedule(None, key=False, healthchecks_url=nobody)  # type: ignore[arg-type]
        result = _test_ping(monitoring, schedule)
        assert not result.ok and result.status is None
        assert "refused" in (result.error or "").lower()
        (status,) = monitoring.status_of(schedule)
        assert status.url == nobody
        assert status.last_ping_at is None  # a failed test leaves no ping behind
    finally:
        monitoring.stop()


def test_a_schedule_without_healthchecks_has_no_test_ping(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    schedule = _schedule(hc, key=False, webhook=f"{hc.url}/hook")
    result = _test_ping(monitoring, schedule)
    assert result.error == "this schedule has no Healthchecks check"
    (hook,) = monitoring.status_of(schedule)
    assert (hook.target, hook.url) == ("webhook", f"{hc.url}/hook")


def test_a_monitor_that_cannot_be_reached_is_the_checks_last_error(
    tmp_path: Path, clock: FakeClock
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        nobody = f"http://127.0.0.1:{port}/ping/abc"
        schedule = _schedule(None, key=False, healthchecks_url=nobody)  # type: ignore[arg-type]
        monitoring.observe(_fire(), schedule)
        wait_for(lambda: monitoring.status_of(schedule)[0].last_error, WAIT, "the error")
        (status,) = monitoring.status_of(schedule)
        assert status.last_error is not None
        assert status.last_error.startswith("monitor unreachable (")
        assert (status.waiting, status.last_ping_at) == (1, None)
    finally:
        monitoring.stop()


def test_a_test_ping_asked_while_the_app_quits_is_answered(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    monitoring.stop()
    result = _test_ping(monitoring, _schedule(hc))
    assert result.error == "the app is quitting"


def test_after_a_restart_the_state_is_asked_of_healthchecks_once(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    schedule = _schedule(hc)
    first = _monitoring(tmp_path, clock)
    first.start()
    try:
        first.sync([schedule])
        first.observe(_fire(), schedule)
        first.observe(_finished(status=RunStatus.failed, code=3), schedule)
        assert first.worker.drained(WAIT)
    finally:
        first.stop()
    check = hc.by_name("Backup (domi #7)")
    assert check.status == "down"
    second = _monitoring(tmp_path, clock)
    second.start()
    try:
        (before,) = second.status_of(schedule)
        assert before.state is CheckState.unknown  # nothing heard since this start
        second.sync([schedule])  # the start's: the check is as it was, nothing to update
        assert second.worker.drained(WAIT)
        (after,) = second.status_of(schedule)
        assert (after.state, after.last_ping_at) == (CheckState.down, None)
        second.sync([schedule])
        assert second.worker.drained(WAIT)
        gets = [r for r in hc.requests if r[0] == "GET" and r[1].endswith(check.code)]
        assert len(gets) == 1  # asked once, not at every sync
    finally:
        second.stop()
