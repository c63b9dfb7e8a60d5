"""The local Healthchecks the monitor tests trust: its down decisions are Healthchecks' own
(hc/api/models.py), checked here on a clock the test moves."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.monitor.fake_healthchecks import FakeHealthchecks

KEY = "test-key-123456"
T0 = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def hc(clock: Clock) -> Iterator[FakeHealthchecks]:
    with FakeHealthchecks(KEY, now=clock) as server:
        yield server


def call(hc: FakeHealthchecks, path: str, body: object = None, key: str | None = KEY) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(hc.url + path, data=data, method="POST" if data else "GET")
    if key:
        request.add_header("X-Api-Key", key)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read()) if path.startswith("/api") else response.read()


def test_a_cron_check_goes_down_at_its_next_due_plus_grace_and_not_before(
    hc: FakeHealthchecks, clock: Clock
) -> None:
    made = call(hc, "/api/v3/checks/", {"name": "hourly", "schedule": "0 * * * *", "tz": "UTC",
                                        "grace": 1800})  # fmt: skip
    assert isinstance(made, dict)
    code = made["ping_url"].rsplit("/", 1)[1]
    call(hc, f"/ping/{code}")
    check = hc.by_name("hourly")
    clock.now = datetime(2026, 3, 2, 10, 29, 59, tzinfo=UTC)
    assert hc.downs() == [] and check.status_now(clock.now) == "grace"
    clock.now += timedelta(hours=5)  # a clock that jumps finds the flip when it was due
    [(_name, flip)] = hc.downs()
    assert flip.at == datetime(2026, 3, 2, 10, 30, tzinfo=UTC)


def test_paused_and_new_checks_never_go_down_on_time_and_a_ping_resumes(
    hc: FakeHealthchecks, clock: Clock
) -> None:
    check = hc.add_check("daily", schedule="0 3 * * *", grace=timedelta(minutes=30))
    call(hc, f"/ping/{check.code}")
    call(hc, f"/api/v3/checks/{check.code}/pause", {})
    clock.now += timedelta(days=3)
    assert hc.downs() == [] and check.status == "paused"
    call(hc, f"/ping/{check.code}/log", key=None)
    assert check.status == "paused"
    call(hc, f"/ping/{check.code}/0")
    assert check.status == "up"
    hc.add_check("never pinged", schedule="* * * * *")
    clock.now += timedelta(days=30)
    assert [name for name, _ in hc.downs()] == ["daily"]


def test_a_start_without_its_end_within_grace_is_down_and_a_failure_at_once(
    hc: FakeHealthchecks, clock: Clock
) -> None:
    check = hc.add_check("job", schedule="0 9 * * *", grace=timedelta(minutes=10))
    rid = "6f1c3a52-5d1e-4c36-9a0e-2f4b8d7c1e24"
    call(hc, f"/ping/{check.code}/start?rid={rid}")
    clock.now += timedelta(minutes=10)
    [(_name, late)] = hc.downs()
    assert late.at == T0 + timedelta(minutes=10)
    call(hc, f"/ping/{check.code}/0?rid={rid}")
    call(hc, f"/ping/{check.code}/7")
    assert [f.new for f in check.flips] == ["down", "up", "down"]
    assert check.pings[-1].exitstatus == 7


def test_the_api_wants_its_key_and_a_schedule_healthchecks_can_read(hc: FakeHealthchecks) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        call(hc, "/api/v3/checks/", {"name": "x"}, key="wrong")
    refused.value.close()
    assert refused.value.code == 401
    with pytest.raises(urllib.error.HTTPError) as bad:
        call(hc, "/api/v3/checks/", {"name": "x", "schedule": "61 * * * *", "tz": "UTC"})
    bad.value.close()
    assert bad.value.code == 400
    first = call(hc, "/api/v3/checks/", {"name": "x", "unique": ["name"], "timeout": 3600})
    again = call(hc, "/api/v3/checks/", {"name": "x", "unique": ["name"], "timeout": 7200})
    assert isinstance(first, dict) and isinstance(again, dict)
    assert first["ping_url"] == again["ping_url"] and again["timeout"] == 7200
