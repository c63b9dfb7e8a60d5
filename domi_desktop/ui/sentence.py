"""A schedule in one sentence, for the tray and the Schedules window, when it waits for a disk,
a network's name or a path, or runs at moments of the session too: "At 00:00, every day, when
the disk Backup is plugged in; waits at most 3 days, then runs anyway." (issue 23)."""

from __future__ import annotations

from domi_desktop.cron import describe, parse
from domi_desktop.errors import DomiError
from domi_desktop.model import Schedule
from domi_desktop.scheduler.conditions import RESOURCES, describe_conditions
from domi_desktop.scheduler.session import describe_session
from domi_desktop.ui.editor.conditions import condition_language


def schedule_sentence(schedule: Schedule) -> str | None:
    """``None`` for a schedule with none of those: its time in words says it all."""
    conditions, session = schedule.policies.conditions, schedule.policies.session
    waits = any(getattr(conditions, need.value) is not None for need in RESOURCES)
    if not waits and not session.any:
        return None
    lang = condition_language()
    moments = describe_session(session, lang)
    if session.only:
        return moments
    try:
        when = describe(parse(schedule.expr), lang)
    except DomiError:
        return None
    if waits:
        text = describe_conditions(conditions, schedule.action.kind, lang, when)
    else:
        text = when + ("。" if lang == "zh" else ".")
    return f"{text} {moments}" if moments else text
