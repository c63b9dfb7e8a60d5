"""Session triggers (at login, at unlock, on resume, before sleep): moments of the session that
fire a schedule besides, or instead of, its cron expression, each at most once per
``min_interval``. Pure: the app says which moment came and when; the runs' record says when each
trigger last fired."""

from __future__ import annotations

from datetime import datetime

from domi_desktop.errors import ParamError
from domi_desktop.model import SessionTriggers, Trigger

FLAGS = {
    Trigger.login: "at_login",
    Trigger.unlock: "at_unlock",
    Trigger.resume: "on_resume",
    Trigger.before_sleep: "before_sleep",
}
"""Each session trigger and the ``SessionTriggers`` flag that asks for it."""

SESSION_TRIGGERS = frozenset(FLAGS)


def wants(session: SessionTriggers, trigger: Trigger) -> bool:
    flag = FLAGS.get(trigger)
    return flag is not None and bool(getattr(session, flag))


def allowed(session: SessionTriggers, last: datetime | None, now: datetime) -> bool:
    """Whether a trigger that last fired at ``last`` may fire again at ``now``. A clock set
    back (``last`` after ``now``) does not hold it back for ever."""
    if last is None or session.min_interval is None:
        return True
    return not last <= now < last + session.min_interval


def check_session(session: SessionTriggers, where: str = "session") -> None:
    if session.min_interval is not None and session.min_interval.total_seconds() <= 0:
        raise ParamError(f"{where}.min_interval", "must be longer than zero")
    if session.only and not session.any:
        raise ParamError(f"{where}.only", "needs at least one trigger to run at all")
