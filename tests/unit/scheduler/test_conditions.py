from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.errors import ParamError
from domi_desktop.model import Conditions, NetworkState, OnDeadline, RunStatus, SystemState
from domi_desktop.scheduler.conditions import (
    Gate,
    Need,
    Verdict,
    check_conditions,
    format_span,
    gate,
    lost,
    needs_network,
)

DUE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ONLINE = SystemState(network=NetworkState.online, metered=False, on_ac=True)
MAINS = SystemState()
HOUR = timedelta(hours=1)


def battery(percent: int) -> SystemState:
    return SystemState(on_ac=False, battery_percent=percent)


def test_a_waiting_run_is_not_finished() -> None:
    assert not RunStatus.waiting.finished
    assert not RunStatus.running.finished
    assert RunStatus.skipped.finished


@pytest.mark.parametrize(
    ("requires", "kind", "needed"),
    [
        (None, "http", True),
        (None, "command", False),
        (True, "command", True),
        (False, "http", False),
    ],
)
def test_an_http_action_needs_the_network_by_default(
    requires: bool | None, kind: str, needed: bool
) -> None:
    assert needs_network(Conditions(requires_network=requires), kind) is needed


@pytest.mark.parametrize(
    ("network", "verdict", "reason"),
    [
        (NetworkState.online, Verdict.run, None),
        (NetworkState.unknown, Verdict.run, None),
        (NetworkState.offline, Verdict.wait, "waiting for the network"),
        (NetworkState.portal, Verdict.wait, "waiting for the network (behind a captive portal)"),
        (NetworkState.limited, Verdict.wait, "waiting for the network (local network only)"),
    ],
)
def test_an_http_job_waits_until_the_network_is_usable(
    network: NetworkState, verdict: Verdict, reason: str | None
) -> None:
    result = gate(Conditions(), "http", SystemState(network=network), DUE, DUE, None)
    assert (result.verdict, result.reason) == (verdict, reason)
    assert gate(Conditions(), "command", SystemState(network=network), DUE, DUE, None).verdict is (
        Verdict.run
    )


def test_the_battery_reason_says_the_charge_and_the_level() -> None:
    result = gate(Conditions(min_battery_percent=50), "command", battery(35), DUE, DUE, None)
    assert result.verdict is Verdict.wait
    assert result.reason == "waiting for the charger (battery 35 % < 50 %)"


def test_several_unmet_conditions_are_named_together() -> None:
    state = SystemState(network=NetworkState.offline, metered=True, on_ac=False)
    conditions = Conditions(unmetered_only=True, on_ac_power=True)
    result = gate(conditions, "http", state, DUE, DUE, None)
    assert [item.need for item in result.unmet] == [Need.network, Need.unmetered, Need.charger]
    assert result.reason == "waiting for the network, an unmetered network and the charger"


# -- every policy against every power state, before and at the deadline --------------------------

POWER_POLICIES = {
    "none": Conditions(),
    "ac": Conditions(on_ac_power=True),
    "battery50": Conditions(min_battery_percent=50),
    "ac+battery50": Conditions(on_ac_power=True, min_battery_percent=50),
}
POWER_STATES = {
    "mains, no battery": SystemState(on_ac=True, battery_percent=None),
    "mains, 10 %": SystemState(on_ac=True, battery_percent=10),
    "battery 80 %": battery(80),
    "battery 50 %": battery(50),
    "battery 35 %": battery(35),
    "battery, charge unknown": SystemState(on_ac=False, battery_percent=None),
}
# (policy, state) -> waits?
WAITS = {
    ("ac", "battery 80 %"),
    ("ac", "battery 50 %"),
    ("ac", "battery 35 %"),
    ("ac", "battery, charge unknown"),
    ("ac+battery50", "battery 80 %"),
    ("ac+battery50", "battery 50 %"),
    ("ac+battery50", "battery 35 %"),
    ("ac+battery50", "battery, charge unknown"),
    ("battery50", "battery 35 %"),
}
DEADLINES = {"no deadline": None, "6 h then run": OnDeadline.run, "6 h then skip": OnDeadline.skip}


@pytest.mark.parametrize(
    ("policy", "power", "deadline", "after"),
    list(itertools.product(POWER_POLICIES, POWER_STATES, DEADLINES, [HOUR, 6 * HOUR, 30 * HOUR])),
)
def test_every_power_policy_against_every_power_state(
    policy: str, power: str, deadline: str, after: timedelta
) -> None:
    on_deadline = DEADLINES[deadline]
    conditions = Conditions(
        on_ac_power=POWER_POLICIES[policy].on_ac_power,
        min_battery_percent=POWER_POLICIES[policy].min_battery_percent,
        wait_at_most=None if on_deadline is None else 6 * HOUR,
        on_deadline=on_deadline or OnDeadline.run,
    )
    result = gate(conditions, "command", POWER_STATES[power], DUE, DUE + after, None)
    if (policy, power) not in WAITS:
        assert result == Gate(Verdict.run)
    elif on_deadline is None:
        assert (result.verdict, result.until) == (Verdict.wait, None)
    elif after < 6 * HOUR:
        assert (result.verdict, result.until) == (Verdict.wait, DUE + 6 * HOUR)
    else:
        expected = Verdict.run_anyway if on_deadline is OnDeadline.run else Verdict.skip
        assert (result.verdict, result.waited) == (expected, 6 * HOUR)
        assert result.reason is not None
        assert result.reason.endswith(f"after waiting 6 hours for {describe(result)}")


def describe(result: Gate) -> str:
    return (result.reason or "").split(" for ", 1)[1]


def test_the_deadline_counts_from_the_due_and_says_what_happened() -> None:
    conditions = Conditions(on_ac_power=True, wait_at_most=6 * HOUR)
    just_before = gate(
        conditions, "command", battery(90), DUE, DUE + 6 * HOUR - timedelta(seconds=1), None
    )
    assert just_before.verdict is Verdict.wait
    at = gate(conditions, "command", battery(90), DUE, DUE + 6 * HOUR, None)
    assert at.reason == "ran anyway after waiting 6 hours for the charger"
    skipping = Conditions(on_ac_power=True, wait_at_most=6 * HOUR, on_deadline=OnDeadline.skip)
    skipped = gate(skipping, "command", battery(90), DUE, DUE + 7 * HOUR, None)
    assert skipped.reason == "skipped after waiting 6 hours for the charger"


# -- metered ---------------------------------------------------------------------------------------

METERED = SystemState(network=NetworkState.online, metered=True)


@pytest.mark.parametrize("metered", [False, None])
def test_an_unmetered_or_unknown_connection_is_fine(metered: bool | None) -> None:
    state = SystemState(network=NetworkState.online, metered=metered)
    assert (
        gate(Conditions(unmetered_only=True), "http", state, DUE, DUE, None).verdict is Verdict.run
    )


def test_a_metered_connection_waits_without_an_allowance() -> None:
    result = gate(Conditions(unmetered_only=True), "http", METERED, DUE, DUE + 100 * HOUR, None)
    assert (result.verdict, result.reason, result.until) == (
        Verdict.wait,
        "waiting for an unmetered network",
        None,
    )


def test_a_metered_run_is_allowed_after_days_without_a_success() -> None:
    conditions = Conditions(unmetered_only=True, metered_after=timedelta(days=3))
    success = DUE - timedelta(days=2)
    before = gate(conditions, "http", METERED, DUE, DUE + 23 * HOUR, success)
    assert (before.verdict, before.until) == (Verdict.wait, success + timedelta(days=3))
    after = gate(conditions, "http", METERED, DUE, DUE + 24 * HOUR, success)
    assert after.verdict is Verdict.run
    assert after.reason == "ran on a metered network after 3 days without a successful run"


def test_a_schedule_that_never_succeeded_counts_its_allowance_from_the_due() -> None:
    conditions = Conditions(unmetered_only=True, metered_after=timedelta(days=1))
    assert gate(conditions, "http", METERED, DUE, DUE + 23 * HOUR, None).verdict is Verdict.wait
    assert gate(conditions, "http", METERED, DUE, DUE + 24 * HOUR, None).verdict is Verdict.run


def test_the_allowance_does_not_lift_other_conditions() -> None:
    conditions = Conditions(
        unmetered_only=True,
        metered_after=timedelta(days=1),
        on_ac_power=True,
        wait_at_most=48 * HOUR,
    )
    state = SystemState(network=NetworkState.online, metered=True, on_ac=False)
    result = gate(conditions, "http", state, DUE, DUE + 30 * HOUR, None)
    assert [item.need for item in result.unmet] == [Need.charger]
    assert result.until == DUE + 48 * HOUR


def test_until_is_the_earliest_instant_time_alone_changes() -> None:
    conditions = Conditions(
        unmetered_only=True, metered_after=timedelta(days=3), wait_at_most=timedelta(days=1)
    )
    result = gate(conditions, "http", METERED, DUE, DUE, None)
    assert result.until == DUE + timedelta(days=1)


@given(
    network=st.sampled_from(NetworkState),
    metered=st.sampled_from([True, False, None]),
    on_ac=st.booleans(),
    percent=st.one_of(st.none(), st.integers(0, 100)),
    requires=st.sampled_from([True, False, None]),
    unmetered=st.booleans(),
    on_ac_power=st.booleans(),
    minimum=st.one_of(st.none(), st.integers(1, 100)),
    wait=st.one_of(st.none(), st.integers(1, 10_000)),
    elapsed=st.integers(0, 20_000),
)
def test_the_gate_waits_exactly_while_something_is_unmet_and_time_remains(
    network: NetworkState,
    metered: bool | None,
    on_ac: bool,
    percent: int | None,
    requires: bool | None,
    unmetered: bool,
    on_ac_power: bool,
    minimum: int | None,
    wait: int | None,
    elapsed: int,
) -> None:
    conditions = Conditions(
        requires_network=requires,
        unmetered_only=unmetered,
        on_ac_power=on_ac_power,
        min_battery_percent=minimum,
        wait_at_most=None if wait is None else timedelta(minutes=wait),
    )
    state = SystemState(network=network, metered=metered, on_ac=on_ac, battery_percent=percent)
    now = DUE + timedelta(minutes=elapsed)
    result = gate(conditions, "http", state, DUE, now, None)
    if not result.unmet:
        assert result.verdict is Verdict.run
    elif wait is not None and elapsed >= wait:
        assert result.verdict is Verdict.run_anyway
    else:
        assert result.verdict is Verdict.wait
        assert result.until is None or now < result.until
        assert result.reason is not None and result.reason.startswith("waiting for ")


# -- lost --------------------------------------------------------------------------------------------

ONLINE_AC = SystemState(network=NetworkState.online, metered=False, on_ac=True, battery_percent=90)


@pytest.mark.parametrize(
    ("conditions", "after", "reason"),
    [
        (
            Conditions(stop_if_lost=True, on_ac_power=True),
            battery(90),
            "stopped: the charger was unplugged",
        ),
        (
            Conditions(stop_if_lost=True, min_battery_percent=50),
            battery(40),
            "stopped: the battery ran low",
        ),
        (Conditions(stop_if_lost=True, min_battery_percent=50), battery(60), None),
        (
            Conditions(stop_if_lost=True),
            SystemState(network=NetworkState.offline),
            "stopped: the network went away",
        ),
        (
            Conditions(stop_if_lost=True, unmetered_only=True),
            SystemState(network=NetworkState.online, metered=True),
            "stopped: the connection became metered",
        ),
        (Conditions(on_ac_power=True), battery(90), None),
    ],
)
def test_a_condition_that_goes_away_mid_run_stops_it(
    conditions: Conditions, after: SystemState, reason: str | None
) -> None:
    assert lost(conditions, "http", after, at_start=ONLINE_AC) == reason


def test_a_run_that_started_anyway_is_not_stopped_for_what_it_never_had() -> None:
    conditions = Conditions(stop_if_lost=True, on_ac_power=True, wait_at_most=HOUR)
    assert lost(conditions, "command", battery(50), at_start=battery(60)) is None


# -- the words recorded on a run -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "words"),
    [
        (timedelta(hours=1), "1 hour"),
        (timedelta(minutes=90), "1 hour 30 minutes"),
        (timedelta(seconds=45), "45 seconds"),
        (timedelta(0), "0 seconds"),
        (timedelta(days=2), "2 days"),
    ],
)
def test_a_recorded_span_is_in_english(span: timedelta, words: str) -> None:
    assert format_span(span) == words


@pytest.mark.parametrize(
    ("conditions", "param"),
    [
        (Conditions(min_battery_percent=0), "conditions.min_battery_percent"),
        (Conditions(min_battery_percent=101), "conditions.min_battery_percent"),
        (Conditions(wait_at_most=timedelta(0)), "conditions.wait_at_most"),
        (Conditions(unmetered_only=True, metered_after=-HOUR), "conditions.metered_after"),
        (Conditions(metered_after=HOUR), "conditions.metered_after"),
    ],
)
def test_unusable_conditions_name_the_field(conditions: Conditions, param: str) -> None:
    with pytest.raises(ParamError) as caught:
        check_conditions(conditions)
    assert caught.value.param == param


def test_usable_conditions_pass_the_check() -> None:
    check_conditions(
        Conditions(
            unmetered_only=True, metered_after=HOUR, min_battery_percent=100, wait_at_most=HOUR
        )
    )
