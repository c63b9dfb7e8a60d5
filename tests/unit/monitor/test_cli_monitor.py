"""``schedule add|edit`` monitoring options through the real entry point (no app running): kept
in the schedule, changed one at a time, cleared with '', carried by export and import, and bad
values refused with exit 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fakes import FakeClock, wait_for
from tests.unit.cli.test_notes import domi, ok
from tests.unit.monitor.fake_healthchecks import FakeHealthchecks
from tests.unit.monitor.test_monitoring import (  # noqa: F401 (fixtures)
    API_KEY,
    WAIT,
    _finished,
    _fire,
    _monitoring,
    _schedule,
    clock,
    hc,
)

ADD = ("schedule", "add", "backup", "--cron", "0 9 * * 1-5")


def monitor(data: Path) -> dict[str, object]:
    shown = json.loads(ok(data, "schedule", "show", "1", "--json"))
    found: dict[str, object] = shown["policies"].get("monitor", {})
    return found


def test_monitors_are_added_edited_cleared_and_travel(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ok(data, *ADD, "--healthchecks-key", "hc-key", "--healthchecks-api", "https://hc.example.org",
       "--monitor-grace", "15", "--webhook", "https://ntfy.sh/jobs", "--", "true")  # fmt: skip
    assert monitor(data) == {
        "healthchecks_url": None, "healthchecks_key": "hc-key",
        "healthchecks_api": "https://hc.example.org", "grace": 900.0,
        "webhook": "https://ntfy.sh/jobs",
    }  # fmt: skip
    # A ping URL replaces the key; other monitors stay.
    ok(data, "schedule", "edit", "1", "--healthchecks", "https://hc-ping.com/5bf66975")
    assert monitor(data)["healthchecks_url"] == "https://hc-ping.com/5bf66975"
    assert (monitor(data)["healthchecks_key"], monitor(data)["webhook"]) == (
        None, "https://ntfy.sh/jobs"
    )  # fmt: skip
    exported = ok(data, "export")
    elsewhere = tmp_path / "elsewhere"
    ok(elsewhere, "import", "-", stdin=exported)
    assert monitor(elsewhere) == monitor(data)
    ok(data, "schedule", "edit", "1", "--webhook", "", "--healthchecks", "",
       "--healthchecks-api", "")  # fmt: skip
    assert monitor(data) == {}


def test_bad_monitor_values_are_refused_with_exit_2_naming_the_field(tmp_path: Path) -> None:
    data = tmp_path / "data"
    refused = domi(data, *ADD, "--webhook", "file:///etc/passwd", "--", "true")
    assert refused.returncode == 2
    assert "policies.monitor.webhook" in refused.stderr and "Traceback" not in refused.stderr
    refused = domi(data, *ADD, "--healthchecks-key", "bad name", "--", "true")
    assert refused.returncode == 2 and "policies.monitor.healthchecks_key" in refused.stderr


def test_monitor_says_what_waits_to_be_sent_and_which_checks_domi_made(
    tmp_path: Path,
    hc: FakeHealthchecks,  # noqa: F811
    clock: FakeClock,  # noqa: F811
) -> None:
    data = tmp_path / "data"
    assert "waiting to be sent: 0" in ok(data, "monitor")
    monitoring = _monitoring(tmp_path, clock)
    monitoring.start()
    try:
        schedule = _schedule(hc)
        monitoring.sync([schedule])
        assert monitoring.worker.drained(WAIT)
        hc.unreachable = True
        monitoring.observe(_fire(3), schedule)
        monitoring.observe(_finished(3), schedule)
        wait_for(
            lambda: len(json.loads(ok(data, "monitor", "--json"))["waiting"]) == 2, WAIT, "spool"
        )
    finally:
        monitoring.stop()
    report = json.loads(ok(data, "monitor", "--json"))
    assert [(w["kind"], w["signal"]) for w in report["waiting"]] == [
        ("ping", "start"),
        ("ping", "0"),
    ]
    [check] = report["checks"]
    assert (check["name"], check["schedule"], check["tz"]) == (
        "Backup (domi #7)", "0 9 * * 1-5", "Europe/Berlin"
    )  # fmt: skip
    assert API_KEY not in ok(data, "monitor") + ok(data, "monitor", "--json")


def test_a_key_secret_that_does_not_exist_is_refused_where_it_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    # The CLI's subprocesses keep their secrets in a file: a keyring whose names can be listed.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.monitor.file_keyring.FileKeyring")
    monkeypatch.setenv("DOMI_TEST_KEYRING", str(tmp_path / "keyring.json"))
    pasted = "hcw_the_key_itself_pasted_where_its_name_goes"
    ok(data, "secret", "set", "hc-key", stdin=API_KEY)
    ok(data, "secret", "set", "other-key", stdin=API_KEY + "2")
    refused = domi(data, *ADD, "--healthchecks-key", pasted, "--", "true")
    assert refused.returncode == 2, refused.stderr
    assert "policies.monitor.healthchecks_key" in refused.stderr
    assert "hc-key, other-key" in refused.stderr
    assert pasted not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    ok(data, *ADD, "--healthchecks-key", "hc-key", "--", "true")
    refused = domi(data, "schedule", "edit", "1", "--healthchecks-key", "hc-kye")
    assert refused.returncode == 2 and "hc-key, other-key" in refused.stderr
    assert monitor(data)["healthchecks_key"] == "hc-key"
