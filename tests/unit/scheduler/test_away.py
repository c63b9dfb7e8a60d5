from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.model import Conditions, OnReturn, SystemState
from domi_desktop.scheduler.away import (
    Pauses,
    ReturnStep,
    away_words,
    on_return,
    running_time,
    short_span,
)
from domi_desktop.scheduler.conditions import (
    AWAY_RECHECK,
    Need,
    Verdict,
    check_conditions,
    gate,
    lost,
)

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
AWAY = Conditions(away=10 * MIN)


def idle(minutes: float, *, presenting: bool = False) -> SystemState:
    return SystemState(idle=minutes * MIN, presenting=presenting)


def test_it_waits_while_input_is_younger_than_the_threshold_until_it_would_be_away() -> None:
    verdict = gate(AWAY, "command", idle(3), NOW, NOW, None)
    assert verdict.verdict is Verdict.wait
    assert [item.need for item in verdict.unmet] == [Need.away]
    assert verdict.until == NOW + 7 * MIN
    assert verdict.reason == "waiting for you to step away"


def test_it_runs_once_nobody_touched_the_computer_for_the_threshold() -> None:
    assert gate(AWAY, "command", idle(10), NOW, NOW, None).verdict is Verdict.run


@pytest.mark.parametrize(
    "state", [idle(60, presenting=True), SystemState()], ids=["presenting", "unknown"]
)
def test_a_presentation_or_an_idle_time_nobody_can_tell_is_not_away(state: SystemState) -> None:
    verdict = gate(AWAY, "command", state, NOW, NOW, None)
    assert verdict.verdict is Verdict.wait and verdict.until == NOW + AWAY_RECHECK


def test_the_deadline_still_runs_it_exactly_once_when_the_user_never_leaves() -> None:
    conditions = Conditions(away=10 * MIN, wait_at_most=timedelta(hours=2))
    assert gate(conditions, "command", idle(1), NOW, NOW, None).until == NOW + 9 * MIN
    late = gate(conditions, "command", idle(1), NOW, NOW + timedelta(hours=2), None)
    assert late.verdict is Verdict.run_anyway
    assert late.reason == "ran anyway after waiting 2 hours for you to step away"


@pytest.mark.parametrize(
    ("policy", "step"),
    [(OnReturn.pause, ReturnStep.pause), (OnReturn.stop, ReturnStep.stop),
     (OnReturn.carry_on, ReturnStep.none)],
)  # fmt: skip
def test_coming_back_pauses_stops_or_lets_it_run(policy: OnReturn, step: ReturnStep) -> None:
    conditions = Conditions(away=10 * MIN, on_return=policy)
    assert on_return(conditions, idle(0), paused=False) is step
    assert on_return(conditions, idle(12), paused=False) is ReturnStep.none


def test_a_paused_job_goes_on_at_the_next_away_only() -> None:
    assert on_return(AWAY, idle(9), paused=True) is ReturnStep.none
    assert on_return(AWAY, idle(10), paused=True) is ReturnStep.resume
    assert on_return(AWAY, idle(30, presenting=True), paused=True) is ReturnStep.none
    assert on_return(AWAY, idle(0, presenting=True), paused=False) is ReturnStep.pause


def test_coming_back_is_not_a_lost_condition() -> None:
    conditions = Conditions(away=10 * MIN, on_ac_power=True, stop_if_lost=True)
    assert lost(conditions, "command", idle(0), at_start=idle(10)) is None
    went = lost(conditions, "command", SystemState(idle=MIN, on_ac=False), at_start=idle(10))
    assert went == "stopped: the charger was unplugged"


def test_the_history_words_say_the_wait_and_the_pauses() -> None:
    waited = timedelta(hours=2, minutes=14)
    pauses = Pauses().add(5 * MIN).add(4 * MIN).add(2 * MIN)
    assert away_words(waited, pauses) == (
        "waited 2 h 14 min for you to step away; paused 3 times, 11 min"
    )
    assert away_words(None, Pauses().add(40 * timedelta(seconds=1))) == "paused once, 40 s"
    assert away_words(None) is None
    assert short_span(timedelta(days=1, minutes=3)) == "1 d 3 min"


def test_a_timeout_counts_only_the_time_it_ran() -> None:
    pauses = Pauses().add(20 * MIN)
    assert running_time(30 * MIN, pauses) == 10 * MIN


def test_an_away_of_no_length_is_refused() -> None:
    with pytest.raises(ParamError, match="away"):
        check_conditions(Conditions(away=timedelta(0)))
