from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domi_desktop.errors import ParamError
from domi_desktop.model import Alerts, RunStatus
from domi_desktop.scheduler.alerts import (
    AlertNotice,
    AlertState,
    NoticeKind,
    Outcome,
    check_alerts,
    on_result,
    on_tick,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EVERY_5_MIN = timedelta(minutes=5)
FAIL_A = Outcome(False, "failed: exit code 1")
FAIL_B = Outcome(False, "failed: exit code 2")
OK = Outcome(True)


def replay(
    outcomes: Iterable[Outcome | None],
    alerts: Alerts | None = None,
    step: timedelta = EVERY_5_MIN,
) -> tuple[list[AlertNotice], list[int]]:
    """Notices and the indices of the results that paused the schedule (default alerts)."""
    alerts = alerts or Alerts()
    state = AlertState()
    notices: list[AlertNotice] = []
    paused: list[int] = []
    for index, outcome in enumerate(outcomes):
        state, sent, pause = on_result(state, outcome, T0 + index * step, alerts)
        notices.extend(sent)
        if pause:
            paused.append(index)
    return notices, paused


def test_twelve_same_failures_a_success_and_a_new_error_make_three_notifications() -> None:
    notices, paused = replay([FAIL_A] * 12 + [OK, FAIL_B])
    assert [(n.kind, n.failures, n.error) for n in notices] == [
        (NoticeKind.failing, 1, FAIL_A.error),
        (NoticeKind.recovered, 12, None),
        (NoticeKind.failing, 1, FAIL_B.error),
    ]
    assert paused == []


def test_a_different_error_mid_streak_is_news() -> None:
    notices, _ = replay([FAIL_A, FAIL_A, FAIL_B, FAIL_B])
    assert [(n.kind, n.failures) for n in notices] == [
        (NoticeKind.failing, 1),
        (NoticeKind.failing, 3),
    ]


def test_a_reminder_every_n_failures() -> None:
    notices, _ = replay([FAIL_A] * 10, Alerts(notify_every=3, cooldown=None))
    assert [(n.kind, n.failures) for n in notices] == [
        (NoticeKind.failing, 1),
        (NoticeKind.still_failing, 4),
        (NoticeKind.still_failing, 7),
        (NoticeKind.still_failing, 10),
    ]


def test_a_reminder_after_the_cooldown() -> None:
    # Hourly failures with the default one-day cooldown: a reminder on the 25th (24 h later).
    notices, _ = replay([FAIL_A] * 30, step=timedelta(hours=1))
    assert [(n.kind, n.failures) for n in notices] == [
        (NoticeKind.failing, 1),
        (NoticeKind.still_failing, 25),
    ]


def test_no_recovery_notice_when_asked_for_none() -> None:
    notices, _ = replay([FAIL_A, OK], Alerts(notify_recovery=False))
    assert [n.kind for n in notices] == [NoticeKind.failing]


def test_a_success_without_a_streak_says_nothing() -> None:
    assert replay([OK, OK]) == ([], [])


def test_auto_pause_after_k_failures_is_one_notification() -> None:
    notices, paused = replay([FAIL_A] * 6, Alerts(auto_pause_after=3))
    assert paused == [2]
    assert [(n.kind, n.failures) for n in notices] == [
        (NoticeKind.failing, 1),
        (NoticeKind.paused, 3),
    ]
    assert notices[1].failures == 3 and notices[1].error == "failed: exit code 1"


@pytest.mark.parametrize("status", [RunStatus.skipped, RunStatus.interrupted, RunStatus.waiting])
def test_runs_that_neither_fail_nor_succeed_change_nothing(status: RunStatus) -> None:
    state, _, _ = on_result(AlertState(), FAIL_A, T0, Alerts())
    outcome = Outcome.of(status, "busy")
    assert outcome is None
    assert on_result(state, outcome, T0 + EVERY_5_MIN, Alerts()) == (state, (), False)


def test_a_timeout_is_a_failure_with_its_own_error() -> None:
    assert Outcome.of(RunStatus.timed_out, "after 30 s") == Outcome(False, "timed_out: after 30 s")
    assert Outcome.of(RunStatus.failed, None) == Outcome(False, "failed")
    assert Outcome.of(RunStatus.succeeded, None) == OK


@given(st.lists(st.sampled_from([FAIL_A, FAIL_B, OK, None]), max_size=60))
def test_without_reminders_every_notice_is_a_change(outcomes: list[Outcome | None]) -> None:
    # A notice exactly when something changed: a new streak, a new error, or a recovery.
    notices, _ = replay(outcomes, Alerts(notify_every=None, cooldown=None))
    real = [o for o in outcomes if o is not None]
    changes = sum(
        1
        for before, now in zip([OK, *real], real, strict=False)
        if now != before and not (before.succeeded and now.succeeded)
    )
    assert len(notices) == changes


# -- staleness ---------------------------------------------------------------------------------


def test_a_four_day_jump_makes_exactly_one_staleness_notice() -> None:
    alerts = Alerts(stale_after=timedelta(days=2))
    last_success = T0
    state = AlertState()
    notices: list[AlertNotice] = []
    # A wake every minute for an hour after a jump of four days.
    for minute in range(60):
        state, sent = on_tick(state, T0 + timedelta(days=4, minutes=minute), last_success, alerts)
        notices.extend(sent)
    assert [(n.kind, n.stale_for) for n in notices] == [(NoticeKind.stale, timedelta(days=4))]


def test_staleness_repeats_at_most_once_a_day_until_a_success() -> None:
    alerts = Alerts(stale_after=timedelta(hours=6))
    state = AlertState()
    sent_at: list[datetime] = []
    for minutes in range(0, 3 * 24 * 60, 10):
        now = T0 + timedelta(minutes=minutes)
        state, sent = on_tick(state, now, T0 - timedelta(hours=1), alerts)
        sent_at.extend(now for _ in sent)
    assert [moment - T0 for moment in sent_at] == [
        timedelta(hours=5),
        timedelta(days=1, hours=5),
        timedelta(days=2, hours=5),
    ]
    # A success starts afresh: stale again only stale_after after it.
    success = T0 + timedelta(days=3)
    state, _, _ = on_result(state, OK, success, alerts)
    state, sent = on_tick(state, success + timedelta(hours=5), success, alerts)
    assert sent == ()
    state, sent = on_tick(state, success + timedelta(hours=6), success, alerts)
    assert [n.kind for n in sent] == [NoticeKind.stale]


def test_a_notice_from_before_the_last_success_does_not_count() -> None:
    # The state may not have seen the success (rebuilt from history): the success still resets it.
    alerts = Alerts(stale_after=timedelta(hours=1))
    state = AlertState(last_stale_notice=T0)
    _, sent = on_tick(state, T0 + timedelta(hours=3), T0 + timedelta(hours=1), alerts)
    assert [n.kind for n in sent] == [NoticeKind.stale]


def test_no_staleness_without_a_setting_or_a_reference() -> None:
    assert on_tick(AlertState(), T0 + timedelta(days=9), T0, Alerts()) == (AlertState(), ())
    alerts = Alerts(stale_after=timedelta(hours=1))
    assert on_tick(AlertState(), T0, None, alerts) == (AlertState(), ())


# -- words and checks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alerts", "param"),
    [
        (Alerts(notify_every=0), "alerts.notify_every"),
        (Alerts(auto_pause_after=0), "alerts.auto_pause_after"),
        (Alerts(cooldown=timedelta(0)), "alerts.cooldown"),
        (Alerts(stale_after=timedelta(seconds=-1)), "alerts.stale_after"),
    ],
)
def test_unusable_alert_settings_name_the_field(alerts: Alerts, param: str) -> None:
    with pytest.raises(ParamError) as caught:
        check_alerts(alerts)
    assert caught.value.param == param
    check_alerts(Alerts(notify_every=1, auto_pause_after=1, stale_after=timedelta(hours=1)))
