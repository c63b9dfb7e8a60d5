"""Each monitor target keeps its own order and its own trouble: a check whose API key secret does
not exist, a monitor that holds a request open, one that answers with bytes that are not HTTP or
trickles its answer, against stand-in servers on loopback; a drain that costs a short append per
ping; secrets masked in the spool and in every run's output."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.actions.capture import OutputCapture
from domi_desktop.model import CommandAction, Monitor, Policies, Schedule
from domi_desktop.monitor import transport
from domi_desktop.monitor.spool import SPOOL_FILENAME, Spool
from domi_desktop.secrets import Masker
from tests.support.fakes import FakeClock, wait_for
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks
from tests.unit.monitor.standin import GARBAGE, PROPER, SILENT, TRICKLE, StandIn
from tests.unit.monitor.test_monitoring import (
    API_KEY,
    WAIT,
    _finished,
    _fire,
    _monitoring,
    _schedule,
)

PASTED = "hcw_the_key_itself_pasted_where_its_name_goes"


def _kinds(hc: FakeHealthchecks, name: str) -> list[str]:
    with hc.lock:
        found = [c for c in hc.checks.values() if c.name == name]
        return [p.kind for p in found[0].pings] if found else []


def _pinged(standin: StandIn, schedule_id: int = 7) -> Schedule:
    return Schedule(
        schedule_id,
        "Backup",
        "0 9 * * mon-fri",
        "local",
        CommandAction(argv=("/bin/true",)),
        policies=Policies(monitor=Monitor(healthchecks_url=f"{standin.url}/ping/abc")),
    )


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn() as server:
        yield server


def test_a_check_whose_key_secret_is_missing_never_holds_another_checks_pings(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    from dataclasses import replace

    caplog.set_level(logging.DEBUG)
    good = _schedule(hc)
    monitor = replace(good.policies.monitor, healthchecks_key=PASTED)
    broken = replace(good, id=8, name="Broken", policies=Policies(monitor=monitor))
    first = _monitoring(tmp_path, clock)
    first.start()
    try:
        first.observe(_fire(1, schedule_id=8), broken)
        first.observe(_fire(2), good)
        first.observe(_finished(2), good)
        wait_for(lambda: _kinds(hc, "Backup (domi #7)") == ["start", "success"], WAIT, "pings")
    finally:
        first.stop()
    second = _monitoring(tmp_path, clock)  # after a restart, the broken one still waits first
    second.start()
    try:
        second.observe(_fire(3), good)
        wait_for(lambda: _kinds(hc, "Backup (domi #7)")[-1:] == ["start"], WAIT, "the next")
        assert [lane.waiting for lane in second.worker.lanes() if lane.what == "schedule 8"] == [1]
    finally:
        second.stop()
    assert PASTED not in caplog.text


def test_a_monitor_that_holds_its_request_open_never_holds_another_targets_pings(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    with StandIn(SILENT) as silent:
        monitoring = _monitoring(tmp_path, clock)
        monitoring.start()
        try:
            stuck = _pinged(silent, 9)
            monitoring.observe(_fire(1, schedule_id=9), stuck)
            wait_for(lambda: silent.count() == 1, WAIT, "the request held open")
            good = _schedule(hc)
            monitoring.observe(_fire(2), good)
            monitoring.observe(_finished(2), good)
            wait_for(lambda: _kinds(hc, "Backup (domi #7)") == ["start", "success"], WAIT, "pings")
        finally:
            monitoring.stop()  # the request in flight is ended, not waited for


def test_answers_that_are_not_http_drop_nothing_and_keep_the_order(
    tmp_path: Path, clock: FakeClock, standin: StandIn
) -> None:
    standin.mode = GARBAGE
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _pinged(standin)
        for run_id in (1, 2, 3):
            monitoring.observe(_fire(run_id), schedule)
            monitoring.observe(_finished(run_id), schedule)
        wait_for(lambda: standin.count() >= 2, WAIT, "a retry after a captive portal's answer")
        assert standin.paths() == []
        assert len(Spool(tmp_path / "data" / SPOOL_FILENAME)) == 6
        standin.mode = PROPER
        monitoring.woke()
        assert monitoring.worker.drained(WAIT)
    finally:
        monitoring.stop()
    assert [path.split("?")[0] for path in standin.paths()] == [
        "/ping/abc/start",
        "/ping/abc/0",
    ] * 3


def test_an_answer_trickled_a_byte_at_a_time_ends_at_the_deadline_and_keeps_its_pings(
    tmp_path: Path, clock: FakeClock, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "TIMEOUT", 1.0)
    standin.mode = TRICKLE
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _pinged(standin)
        monitoring.observe(_fire(1), schedule)
        monitoring.observe(_finished(1), schedule)
        # The lane sends one request at a time: a second one means the first was ended.
        wait_for(lambda: standin.count() >= 2, WAIT, "the trickled answer cut off, then a retry")
    finally:
        monitoring.stop()
    assert [i.signal for i in Spool(tmp_path / "data" / SPOOL_FILENAME).items] == ["start", "0"]


def test_draining_the_spool_syncs_nothing_per_ping(
    tmp_path: Path, clock: FakeClock, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.mode = GARBAGE
    first = _monitoring(tmp_path, clock)
    first.start()
    try:
        schedule = _pinged(standin)
        for run_id in range(1, 151):
            first.observe(_fire(run_id), schedule)
            first.observe(_finished(run_id), schedule)
        wait_for(lambda: len(Spool(tmp_path / "data" / SPOOL_FILENAME)) == 300, WAIT, "spooled")
    finally:
        first.stop()
    standin.mode = PROPER
    syncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real_fsync(fd))[1])
    second = _monitoring(tmp_path, clock)
    second.start()
    try:
        assert second.worker.drained(WAIT)
    finally:
        second.stop()
    assert len(standin.paths()) == 300
    assert len(syncs) <= 3  # a rewrite of the journal now and then, never one per ping
    assert len(Spool(tmp_path / "data" / SPOOL_FILENAME)) == 0


def test_the_monitors_api_key_is_masked_in_the_spool_and_in_every_runs_output(
    tmp_path: Path, hc: FakeHealthchecks, clock: FakeClock
) -> None:
    monitoring = _monitoring(tmp_path, clock, {41: f"the job printed {API_KEY}\n"})
    monitoring.start()
    try:
        schedule = _schedule(hc)
        hc.unreachable = True
        monitoring.observe(_finished(41), schedule)
        spool = tmp_path / "data" / SPOOL_FILENAME
        wait_for(lambda: len(Spool(spool)) == 1, WAIT, "the ping spooled")
        assert API_KEY not in spool.read_text()
        assert "the job printed ***" in spool.read_text()
        # Another schedule's run, with no secrets of its own, prints the key.
        capture = OutputCapture(tmp_path / "run-1.log", Masker(()))
        capture.write(f"token {API_KEY[:10]}".encode())
        capture.write(f"{API_KEY[10:]} done\n".encode())
        capture.note(f"ended with {API_KEY}")
        capture.close()
        log = (tmp_path / "run-1.log").read_text()
        assert API_KEY not in log and API_KEY not in capture.tail()
        assert "token *** done" in log and "ended with ***" in log
    finally:
        monitoring.stop()
