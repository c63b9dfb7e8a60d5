"""Session triggers (issue 23): moments of the session that fire a schedule besides, or instead
of, its cron expression, each at most once per ``min_interval``. Pure: the app says which moment
came and when; the runs' record says when each trigger last fired."""

from __future__ import annotations

from datetime import datetime

from domi_desktop.errors import ParamError
from domi_desktop.model import SessionTriggers, Trigger
from domi_desktop.scheduler.conditions import format_span, join_words

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


_WORDS = {
    "at_login": ("at login", "登录时"),
    "at_unlock": ("at unlock", "解锁时"),
    "on_resume": ("on waking from sleep", "从睡眠唤醒时"),
    "before_sleep": ("before sleep", "睡眠前"),
}


def describe_session(session: SessionTriggers, lang: str = "en") -> str:
    """ "Also at login and at unlock, at most once every 1 hour." (empty without triggers)."""
    zh = lang == "zh"
    moments = [_WORDS[flag][1 if zh else 0] for flag in _WORDS if getattr(session, flag)]
    if not moments:
        return ""
    text = join_words(moments, lang)
    if session.only:
        text = (f"仅在{text}运行" if zh else f"Only {text}") + ("" if zh else " (not by its time)")
    else:
        text = f"也在{text}运行" if zh else f"Also {text}"
    if session.min_interval is not None:
        span = format_span(session.min_interval, lang)
        text += f"，每 {span}最多一次" if zh else f", at most once every {span}"
    return text + ("。" if zh else ".")
