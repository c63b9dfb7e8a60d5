"""Wake to run at the front door: ``--wake``/``--no-wake`` on add and edit, the policy in the
JSON, and ``simulate --wake-to-run`` saying when the machine would be woken (no app running)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.portable import export_document, parse_document
from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import parse_policies, policies_json
from domi_desktop.model import CommandAction, Policies, Schedule
from domi_desktop.store import Store
from domi_desktop.store.codec import decode_policies, encode_policies
from tests.support.cli import Cli
from tests.support.fakes import FakeClock


def show(cli: Cli, schedule_id: int) -> dict[str, Any]:
    code, out, err = cli("schedule", "show", str(schedule_id), "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_wake_is_set_by_add_and_changed_only_by_an_edit_that_says_so(cli: Cli) -> None:
    code, _, err = cli("schedule", "add", "backup", "--cron", "0 3 * * *", "--wake", "--", "true")
    assert code == 0, err
    assert show(cli, 1)["policies"]["wake_to_run"] is True
    assert cli("schedule", "edit", "1", "--timeout", "60")[0] == 0
    assert show(cli, 1)["policies"]["wake_to_run"] is True  # untouched by other options
    assert cli("schedule", "edit", "1", "--no-wake")[0] == 0
    assert show(cli, 1)["policies"]["wake_to_run"] is False
    cli("schedule", "add", "plain", "--cron", "0 3 * * *", "--", "true")
    assert show(cli, 2)["policies"]["wake_to_run"] is False


def test_wake_and_no_wake_together_are_refused(cli: Cli) -> None:
    code, _, err = cli("schedule", "add", "x", "--cron", "0 3 * * *", "--wake", "--no-wake")
    assert code == 2
    assert "not allowed with argument" in err and "Traceback" not in err


def test_simulate_says_when_the_machine_would_be_woken(cli: Cli) -> None:
    code, out, err = cli(
        "simulate", "30 2 * * *", "--tz", "America/New_York", "--last-due", "2026-03-08T03:00",
        "--wake", "2026-03-09T01:00", "--wake", "2026-03-09T02:30:10", "--wake-to-run",
    )  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[1:] == [
        "  woke Mon 2026-03-09 01:00:00: nothing due yet, no fire (next due Mon 02:30)",
        "    then would wake the machine at 02:29:30 (Mon 2026-03-09)",
        "  woke Mon 2026-03-09 02:30:10: fires for Mon 02:30, on time",
        "    then would wake the machine at 02:29:30 (Tue 2026-03-10)",
    ]
    code, out, _ = cli(
        "simulate", "30 2 * * *", "--tz", "America/New_York", "--last-due", "2026-03-08T03:00",
        "--wake", "2026-03-09T01:00", "--json",
    )  # fmt: skip
    assert json.loads(out)["wakes"][0]["wake_machine_at"] is None  # not asked for


def test_simulate_on_the_spring_forward_night_wakes_the_machine_before_three(cli: Cli) -> None:
    # 02:30 does not exist that night: the job runs at 03:00 EDT, the machine wakes 30 s before,
    # which the clocks still call 01:59:30 EST.
    code, out, _ = cli(
        "simulate", "30 2 * * *", "--tz", "America/New_York", "--last-due", "2026-03-07T02:30",
        "--wake", "2026-03-08T00:00", "--wake-to-run", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["wakes"][0]["wake_machine_at"] == "2026-03-08T01:59:30-05:00"


def test_the_policy_round_trips_the_store_the_wire_and_an_export() -> None:
    waking = Policies(wake_to_run=True)
    assert decode_policies(encode_policies(waking)) == waking
    assert "wake_to_run" not in json.loads(encode_policies(Policies()))  # older rows read alike
    assert parse_policies(policies_json(waking)) == waking
    assert parse_policies({"wake_to_run": False}, waking) == Policies()
    assert parse_policies({"retries": 2}, waking).wake_to_run  # untouched when not given
    schedule = Schedule(1, "backup", "0 3 * * *", "UTC", CommandAction(argv=("true",)),
                        policies=waking)  # fmt: skip
    (portable,) = parse_document(export_document([schedule]))
    assert portable.policies == waking


def test_a_wake_that_is_not_a_boolean_is_named() -> None:
    with pytest.raises(ParamError, match="wake_to_run: must be bool, not str"):
        parse_policies({"wake_to_run": "yes"})


def test_the_socket_s_simulate_says_it_too(tmp_path: Path) -> None:
    now = datetime(2026, 3, 9, tzinfo=UTC)
    with Store.open(tmp_path / "data", now=now) as store:
        answer = Service(store, FakeClock(now)).simulate({
            "expr": "30 2 * * *", "tz": "UTC", "last_due": "2026-03-08T02:30:00+00:00",
            "wakes": ["2026-03-09T01:00:00+00:00"], "policies": {"wake_to_run": True},
        })  # fmt: skip
    assert answer["wakes"][0]["wake_machine_at"] == "2026-03-09T02:29:30+00:00"
