"""On the wire: resource conditions and session triggers in ``policies``, read back as
written, partial edits, and bad input named where it is."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.portable import export_document, parse_document
from domi_desktop.frontdoor.wire import parse_policies, policies_json
from domi_desktop.model import CommandAction, Conditions, Policies, Schedule, SessionTriggers


def test_they_go_out_and_come_back() -> None:
    policies = Policies(
        conditions=Conditions(volume="LABEL=Backup", stop_if_lost=True),
        session=SessionTriggers(at_login=True, before_sleep=True, min_interval=timedelta(hours=1)),
    )
    shape = policies_json(policies)
    assert shape["conditions"]["volume"] == "LABEL=Backup"
    assert shape["session"]["min_interval"] == 3600
    assert parse_policies(shape) == policies


def test_an_edit_changes_only_what_it_names() -> None:
    base = Policies(conditions=Conditions(volume="Backup"), session=SessionTriggers(at_unlock=True))
    edited = parse_policies(
        {"conditions": {"path_exists": "/mnt/nas"}, "session": {"on_resume": True}}, base
    )
    assert edited.conditions == Conditions(volume="Backup", path_exists="/mnt/nas")
    assert edited.session == SessionTriggers(at_unlock=True, on_resume=True)
    cleared = parse_policies({"conditions": {"volume": ""}, "session": None}, edited)
    assert cleared.conditions.volume is None
    assert cleared.session == SessionTriggers()
    assert parse_policies({"retries": 2}, base).session == base.session


@pytest.mark.parametrize(
    ("policies", "param"),
    [
        ({"conditions": {"volume": 3}}, "policies.conditions.volume"),
        ({"conditions": {"path_exists": "x"}}, "policies.conditions.path_exists"),
        ({"session": {"at_boot": True}}, "policies.session.at_boot"),
        ({"session": {"at_login": "yes"}}, "policies.session.at_login"),
        ({"session": {"min_interval": 0}}, "policies.session.min_interval"),
        ({"session": {"min_interval": "1h"}}, "policies.session.min_interval"),
        ({"session": []}, "policies.session"),
    ],
)
def test_bad_input_is_named(policies: dict[str, Any], param: str) -> None:
    with pytest.raises(ParamError) as caught:
        parse_policies(policies)
    assert caught.value.param == param


def test_an_export_carries_them_to_another_machine() -> None:
    policies = Policies(
        conditions=Conditions(volume="Backup", network_name="ethernet"),
        session=SessionTriggers(at_login=True, only=True),
    )
    schedule = Schedule(
        7, "backup", "@daily", "UTC", CommandAction(argv=("true",)), policies=policies
    )
    (imported,) = parse_document(json.loads(json.dumps(export_document([schedule]))))
    assert imported.policies == policies
