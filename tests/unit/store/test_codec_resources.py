"""Resource conditions and session triggers as stored: read back as written, absent when unset."""

from __future__ import annotations

import json
from datetime import timedelta

from domi_desktop.model import Conditions, Policies, SessionTriggers
from domi_desktop.store.codec import decode_policies, encode_policies


def test_resources_and_session_triggers_read_back() -> None:
    policies = Policies(
        conditions=Conditions(
            volume="UUID=1234-ABCD", network_name="office", path_exists="/mnt/nas/ready"
        ),
        session=SessionTriggers(at_unlock=True, min_interval=timedelta(hours=1)),
    )
    assert decode_policies(encode_policies(policies)) == policies


def test_a_schedule_without_them_is_stored_as_before() -> None:
    document = json.loads(encode_policies(Policies(conditions=Conditions(on_ac_power=True))))
    assert "session" not in document
    assert "volume" not in document["conditions"]
