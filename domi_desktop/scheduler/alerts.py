"""Notifications that mean something: a pure fold of a schedule's results into notices.

Each schedule has an ``AlertState``; every finished run goes through ``on_result`` and every wake
through ``on_tick``. The rules, so that repeats are quiet by construction:

* a failure is news when it starts a streak or its error differs from the last one's: notified;
* the same error again is a reminder only after ``notify_every`` more failures or ``cooldown``
  since the last notice (at the defaults: at most once a day);
* the first success after a notified streak is one "works again" notice;
* ``auto_pause_after`` consecutive failures pause the schedule with one notice saying how to resume
  (it stands for that failure's notice: one notification, not two);
* no success for ``stale_after``: one notice, then at most one a day until a success. Runs skipped
  or waiting on a condition are not successes, so they never reset it.

Integration: the runtime keeps one state per schedule (rebuilt at start by folding the schedule's
recent finished runs through ``on_result`` and dropping the notices), sends the notices, disables
the schedule on ``pause``, and calls ``on_tick`` at each wake with the latest success (or the
schedule's creation when it never succeeded).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import NamedTuple

from domi_desktop.errors import ParamError
from domi_desktop.model import Alerts, RunStatus

STALE_REPEAT = timedelta(days=1)
"""A schedule that stays stale is mentioned again at most this often."""


class NoticeKind(Enum):
    failing = "failing"
    still_failing = "still_failing"
    recovered = "recovered"
    paused = "paused"
    stale = "stale"


@dataclass(frozen=True, slots=True)
class AlertNotice:
    kind: NoticeKind
    failures: int = 0
    """Consecutive failures at the notice (for ``recovered``: the streak that ended)."""
    error: str | None = None
    stale_for: timedelta | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What alerts need of a finished run."""

    succeeded: bool
    error: str | None = None

    @staticmethod
    def of(status: RunStatus, reason: str | None) -> Outcome | None:
        """The outcome of a run that ended ``status``; ``None`` for a run that neither failed nor
        succeeded (skipped, interrupted, still waiting or running)."""
        if status is RunStatus.succeeded:
            return Outcome(True)
        if status in (RunStatus.failed, RunStatus.timed_out):
            return Outcome(False, f"{status.value}: {reason}" if reason else status.value)
        return None


@dataclass(frozen=True, slots=True)
class AlertState:
    consecutive_failures: int = 0
    last_error: str | None = None
    notified_at_failure: int = 0
    """``consecutive_failures`` at the last failure notice of this streak (0: none yet)."""
    last_notice_at: datetime | None = None
    last_stale_notice: datetime | None = None


class AlertStep(NamedTuple):
    state: AlertState
    notices: tuple[AlertNotice, ...]
    pause: bool


def check_alerts(alerts: Alerts, where: str = "alerts") -> None:
    """``ParamError`` naming the field of ``alerts`` that cannot be used."""
    for name in ("notify_every", "auto_pause_after"):
        count = getattr(alerts, name)
        if count is not None and count < 1:
            raise ParamError(f"{where}.{name}", f"must be at least 1, not {count}")
    for name in ("cooldown", "stale_after"):
        span = getattr(alerts, name)
        if span is not None and span <= timedelta(0):
            raise ParamError(f"{where}.{name}", f"must be longer than zero, not {span}")


def on_result(
    state: AlertState, outcome: Outcome | None, now: datetime, alerts: Alerts
) -> AlertStep:
    """Fold one finished run into ``state``: the notices to send and whether to pause."""
    if outcome is None:
        return AlertStep(state, (), False)
    if outcome.succeeded:
        notices: tuple[AlertNotice, ...] = ()
        if state.notified_at_failure and alerts.notify_recovery:
            notices = (AlertNotice(NoticeKind.recovered, failures=state.consecutive_failures),)
        return AlertStep(AlertState(), notices, False)

    failures = state.consecutive_failures + 1
    if alerts.auto_pause_after is not None and failures == alerts.auto_pause_after:
        kind: NoticeKind | None = NoticeKind.paused
    elif failures == 1 or outcome.error != state.last_error:
        kind = NoticeKind.failing
    elif _reminder_due(state, failures, now, alerts):
        kind = NoticeKind.still_failing
    else:
        kind = None
    new = replace(state, consecutive_failures=failures, last_error=outcome.error)
    if kind is None:
        return AlertStep(new, (), False)
    new = replace(new, notified_at_failure=failures, last_notice_at=now)
    notice = AlertNotice(kind, failures=failures, error=outcome.error)
    return AlertStep(new, (notice,), kind is NoticeKind.paused)


def _reminder_due(state: AlertState, failures: int, now: datetime, alerts: Alerts) -> bool:
    if (
        alerts.notify_every is not None
        and failures - state.notified_at_failure >= alerts.notify_every
    ):
        return True
    return (
        alerts.cooldown is not None
        and state.last_notice_at is not None
        and now - state.last_notice_at >= alerts.cooldown
    )


def on_tick(
    state: AlertState, now: datetime, last_success: datetime | None, alerts: Alerts
) -> tuple[AlertState, tuple[AlertNotice, ...]]:
    """The staleness watchdog at a wake: ``last_success`` is the end of the latest successful run
    (or the schedule's creation); ``None`` measures nothing."""
    if alerts.stale_after is None or last_success is None:
        return state, ()
    stale_for = now - last_success
    if stale_for < alerts.stale_after:
        return state, ()
    told = state.last_stale_notice
    if told is not None and told >= last_success and now - told < STALE_REPEAT:
        return state, ()
    notice = AlertNotice(NoticeKind.stale, failures=state.consecutive_failures, stale_for=stale_for)
    return replace(state, last_stale_notice=now), (notice,)
