"""Session triggers, the pure part: which moment each schedule asks for, once per
interval, and the sentence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.errors import ParamError
from domi_desktop.model import CommandAction, Policies, Schedule, SessionTriggers, Trigger
from domi_desktop.scheduler.decide import decide
from domi_desktop.scheduler.session import allowed, check_session, wants

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_each_moment_is_asked_for_by_its_own_flag() -> None:
    session = SessionTriggers(at_unlock=True, before_sleep=True)
    assert [t for t in Trigger if wants(session, t)] == [Trigger.unlock, Trigger.before_sleep]
    assert not wants(session, Trigger.manual)


@pytest.mark.parametrize(
    ("last", "fires"),
    [
        (None, True),
        (NOW - HOUR, True),
        (NOW - HOUR + timedelta(seconds=1), False),
        (NOW, False),
        (NOW + timedelta(days=1), True),  # the clock was set back: not held for a day
    ],
)
def test_at_most_once_per_interval(last: datetime | None, fires: bool) -> None:
    assert allowed(SessionTriggers(at_unlock=True, min_interval=HOUR), last, NOW) is fires
    assert allowed(SessionTriggers(at_unlock=True), last, NOW)


def test_only_needs_a_trigger() -> None:
    with pytest.raises(ParamError) as caught:
        check_session(SessionTriggers(only=True), "s")
    assert caught.value.param == "s.only"
    check_session(SessionTriggers(at_login=True, only=True))


def test_a_schedule_fired_only_by_moments_is_never_due_by_its_time() -> None:
    action = CommandAction(argv=("true",))
    only = Policies(session=SessionTriggers(at_login=True, only=True))
    also = Policies(session=SessionTriggers(at_login=True))
    for policies, fires in ((only, False), (also, True)):
        schedule = Schedule(1, "s", "@hourly", "UTC", action, policies=policies,
                            last_due=NOW - 3 * HOUR)  # fmt: skip
        assert (decide(schedule, NOW) is not None) is fires
