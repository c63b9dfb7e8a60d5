"""``policies.monitor``: kept in the policies JSON (no migration), said on the wire, checked
where it is typed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import parse_policies, policies_json
from domi_desktop.model import Monitor, Policies
from domi_desktop.store.codec import decode_policies, encode_policies

WATCHED = Policies(
    monitor=Monitor(
        healthchecks_key="hc-key",
        healthchecks_api="https://hc.example.org",
        grace=timedelta(minutes=5),
        webhook="https://ntfy.sh/my-jobs",
    )
)


def test_a_monitor_survives_the_store_and_the_wire() -> None:
    assert decode_policies(encode_policies(WATCHED)) == WATCHED
    assert parse_policies(policies_json(WATCHED)) == WATCHED


def test_policies_without_a_monitor_are_written_as_before() -> None:
    assert "monitor" not in encode_policies(Policies())
    assert decode_policies('{"v": 1}').monitor == Monitor()


def test_a_monitor_change_keeps_the_rest_and_null_clears_it() -> None:
    changed = parse_policies({"monitor": {"grace": 600}}, WATCHED)
    assert changed.monitor.grace == timedelta(minutes=10)
    assert changed.monitor.webhook == WATCHED.monitor.webhook
    assert parse_policies({"monitor": None}, WATCHED).monitor == Monitor()
    assert parse_policies({"retries": 2}, WATCHED).monitor == WATCHED.monitor


@pytest.mark.parametrize(
    ("monitor", "param"),
    [
        ({"webhook": "ftp://example.org/x"}, "policies.monitor.webhook"),
        (
            {"healthchecks_url": "https://user:pw@hc-ping.com/x"},
            "policies.monitor.healthchecks_url",
        ),
        ({"healthchecks_key": "not a name!"}, "policies.monitor.healthchecks_key"),
        ({"grace": 5}, "policies.monitor.grace"),
        ({"grace": True}, "policies.monitor.grace"),
        ({"pager": "x"}, "policies.monitor.pager"),
        (
            {"healthchecks_url": "https://hc-ping.com/x", "healthchecks_key": "k1"},
            "policies.monitor.healthchecks_key",
        ),
        ("yes", "policies.monitor"),
    ],
)
def test_what_cannot_be_used_is_refused_naming_the_field(monitor: object, param: str) -> None:
    with pytest.raises(ParamError) as raised:
        parse_policies({"monitor": monitor})
    assert raised.value.param == param
