from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.model import (
    CatchUp,
    CommandAction,
    HttpAction,
    Overlap,
    Policies,
    RunStatus,
)
from domi_desktop.store import codec
from domi_desktop.store._reader import decode_member

texts = st.text(max_size=20)
optional_texts = st.none() | texts
pairs = st.lists(st.tuples(texts, texts), max_size=4).map(tuple)
# Whole microseconds within ±30 years: seconds as a float are exact at that precision there.
durations = st.integers(min_value=-(10**15), max_value=10**15).map(
    lambda us: timedelta(microseconds=us)
)

command_actions = st.builds(
    CommandAction,
    argv=st.lists(texts, max_size=4).map(tuple),
    shell=optional_texts,
    cwd=optional_texts,
    env=pairs,
    secret_env=pairs,
    stdin=optional_texts,
)
http_actions = st.builds(
    HttpAction,
    url=texts,
    method=texts,
    headers=pairs,
    secret_headers=pairs,
    body=optional_texts,
    timeout=st.floats(allow_nan=False, allow_infinity=False),
)
policies = st.builds(
    Policies,
    catch_up=st.sampled_from(CatchUp),
    catch_up_within=st.none() | durations,
    overlap=st.sampled_from(Overlap),
    concurrency_key=optional_texts,
    timeout=st.none() | durations,
    retries=st.integers(min_value=0, max_value=2**53),
    retry_backoff=durations,
    jitter=durations,
)


@given(command_actions | http_actions)
def test_any_action_survives_a_round_trip(action: CommandAction | HttpAction) -> None:
    assert codec.decode_action(codec.encode_action(action)) == action


@given(policies)
def test_any_policies_survive_a_round_trip(value: Policies) -> None:
    assert codec.decode_policies(codec.encode_policies(value)) == value


@given(
    st.datetimes(
        min_value=datetime(1900, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
    )
)
def test_an_aware_instant_survives_as_exact_microseconds(instant: datetime) -> None:
    back = codec.from_micros(codec.to_micros(instant))
    assert back == instant
    assert back.tzinfo is UTC


def test_a_naive_datetime_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        codec.to_micros(datetime(2026, 1, 1, 9, 0))


def test_the_command_shape_is_written_field_by_field_with_a_version() -> None:
    action = CommandAction(argv=("report",), env=(("LANG", "C"),), secret_env=(("TOKEN", "api"),))
    assert json.loads(codec.encode_action(action)) == {
        "v": 1,
        "kind": "command",
        "argv": ["report"],
        "shell": None,
        "cwd": None,
        "env": [["LANG", "C"]],
        "secret_env": [["TOKEN", "api"]],
        "stdin": None,
    }


def test_the_policies_shape_stores_enums_by_value_and_durations_in_seconds() -> None:
    value = Policies(
        catch_up=CatchUp.skip,
        catch_up_within=timedelta(hours=12),
        overlap=Overlap.replace,
        timeout=timedelta(minutes=10),
    )
    assert json.loads(codec.encode_policies(value)) == {
        "v": 1,
        "catch_up": "skip",
        "catch_up_within": 43200.0,
        "overlap": "replace",
        "concurrency_key": None,
        "timeout": 600.0,
        "retries": 0,
        "retry_backoff": 30.0,
        "jitter": 0.0,
    }


def test_missing_policy_keys_take_the_defaults() -> None:
    assert codec.decode_policies('{"v": 1}') == Policies()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"kind": "command"}', "lacks 'v'"),
        ('{"v": 2, "kind": "command"}', "newer domi-desktop"),
        ('{"v": true, "kind": "command"}', "should be int"),
        ('{"v": 1, "kind": "carrier pigeon"}', "unknown kind"),
        ('{"v": 1, "kind": "command", "argv": "ls -l"}', "should be list"),
        ('{"v": 1, "kind": "command", "argv": [1]}', "list of strings"),
        ('{"v": 1, "kind": "command", "env": [["A"]]}', "pairs"),
        ('{"v": 1, "kind": "http"}', "lacks 'url'"),
        ('{"v": 1, "kind": "http", "url": "u", "timeout": "30"}', "should be a number"),
    ],
)
def test_a_bad_action_document_is_a_codec_error(text: str, message: str) -> None:
    with pytest.raises(codec.CodecError, match=message):
        codec.decode_action(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"v": 1, "overlap": "sometimes"}', "unknown overlap"),
        ('{"v": 1, "retries": 1.5}', "should be int"),
        ('{"v": 1, "jitter": 1e300}', "out of range"),
        ('{"v": 1, "timeout": false}', "should be a number"),
    ],
)
def test_bad_policies_are_a_codec_error(text: str, message: str) -> None:
    with pytest.raises(codec.CodecError, match=message):
        codec.decode_policies(text)


def test_an_unknown_stored_status_is_a_codec_error() -> None:
    with pytest.raises(codec.CodecError, match="unknown status 'exploded'"):
        decode_member(RunStatus, "exploded", "status")
