"""Conditions and alerts in the policies JSON: stored, sent, parsed, checked; and the CLI options."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from domi_desktop.cli import main
from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import parse_policies, policies_json
from domi_desktop.model import Alerts, Conditions, OnDeadline, Policies
from domi_desktop.store import codec

FULL = Policies(
    conditions=Conditions(
        requires_network=False, unmetered_only=True, metered_after=timedelta(days=2),
        on_ac_power=True, min_battery_percent=30, wait_at_most=timedelta(hours=6),
        on_deadline=OnDeadline.skip, stop_if_lost=True, keep_awake=True,
    ),
    alerts=Alerts(notify_every=5, cooldown=None, notify_recovery=False, auto_pause_after=3,
                  stale_after=timedelta(days=1)),
)  # fmt: skip


def test_it_stores_and_reads_back_every_condition_and_alert() -> None:
    assert codec.decode_policies(codec.encode_policies(FULL)) == FULL


def test_a_row_written_before_conditions_reads_as_the_defaults() -> None:
    old = '{"v": 1, "catch_up": "latest", "overlap": "skip", "retries": 0}'
    policies = codec.decode_policies(old)
    assert policies.conditions == Conditions() and policies.alerts is None
    assert "conditions" not in codec.encode_policies(Policies())


def test_a_stored_condition_of_the_wrong_type_names_its_key() -> None:
    bad = '{"v": 1, "conditions": {"on_ac_power": "yes"}}'
    with pytest.raises(codec.CodecError, match=r"policies\.conditions: 'on_ac_power'"):
        codec.decode_policies(bad)


def test_the_wire_shape_round_trips_and_edits_change_only_what_is_given() -> None:
    assert parse_policies(policies_json(FULL)) == FULL
    edited = parse_policies({"conditions": {"min_battery_percent": 50}}, FULL)
    assert edited.conditions.min_battery_percent == 50 and edited.conditions.on_ac_power
    assert parse_policies({"alerts": None}, FULL).alerts is None


@pytest.mark.parametrize(
    ("value", "param"),
    [
        ({"conditions": {"min_battery_percent": 0}}, "policies.conditions.min_battery_percent"),
        ({"conditions": {"metered_after": 60}}, "policies.conditions.metered_after"),
        ({"conditions": {"on_deadline": "later"}}, "policies.conditions.on_deadline"),
        ({"conditions": {"keep_awake": None}}, "policies.conditions.keep_awake"),
        ({"conditions": {"charger": True}}, "policies.conditions.charger"),
        ({"alerts": {"auto_pause_after": 0}}, "policies.alerts.auto_pause_after"),
        ({"alerts": {"stale_after": 0}}, "policies.alerts.stale_after"),
        ({"alerts": []}, "policies.alerts"),
    ],
)
def test_bad_conditions_and_alerts_name_the_field(value: object, param: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_policies(value)
    assert caught.value.param == param


def test_the_cli_options_set_conditions_and_alerts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOMI_DATA_DIR", str(tmp_path))
    assert main(["schedule", "add", "backup", "--cron", "0 3 * * *", "--on-ac-power",
                 "--wait-at-most", "21600", "--on-deadline", "skip", "--keep-awake",
                 "--stop-if-lost", "--auto-pause-after", "3", "--", "true"]) == 0  # fmt: skip
    assert main(["schedule", "edit", "1", "--unmetered-only", "--metered-after", "2"]) == 0
    capsys.readouterr()
    assert main(["schedule", "show", "1", "--json"]) == 0
    policies = json.loads(capsys.readouterr().out)["policies"]
    assert policies["conditions"] == {
        "requires_network": None, "unmetered_only": True, "metered_after": 172800.0,
        "on_ac_power": True, "min_battery_percent": None, "wait_at_most": 21600.0,
        "on_deadline": "skip", "stop_if_lost": True, "keep_awake": True,
    }  # fmt: skip
    assert policies["alerts"]["auto_pause_after"] == 3
    assert main(["schedule", "edit", "1", "--min-battery", "101"]) == 2
    assert "policies.conditions.min_battery_percent" in capsys.readouterr().err
