"""A schedule in one sentence, for the tray and the Schedules window, when it waits for a disk,
a network's name or a path, or runs at moments of the session too: "At 00:00, every day, when
the disk Backup is plugged in; waits at most 3 days, then runs anyway." is one such sentence."""

from __future__ import annotations

from domi_desktop.cron import describe, parse
from domi_desktop.errors import DomiError
from domi_desktop.model import Schedule
from domi_desktop.runtime.view import EngineState
from domi_desktop.scheduler.conditions import RESOURCES
from domi_desktop.ui.condition_words import conditions_words, sentences_words, session_words
from domi_desktop.ui.history.texts import reason_words
from domi_desktop.ui.i18n import cron_language, register, tr


def schedule_sentence(schedule: Schedule) -> str | None:
    """``None`` for a schedule with none of those: its time in words says it all."""
    conditions, session = schedule.policies.conditions, schedule.policies.session
    waits = any(getattr(conditions, need.value) is not None for need in RESOURCES)
    if not waits and not session.any:
        return None
    moments = session_words(session)
    if session.only:
        return moments
    try:
        when = describe(parse(schedule.expr), cron_language())
    except DomiError:
        return None
    if waits:
        text = conditions_words(conditions, schedule.action.kind, when)
    else:
        text = tr("{sentence}.", sentence=when)
    return sentences_words([text, moments]) if moments else text


WAITING_SHOWN = 3
"""Waiting runs the tray's tooltip names; more are counted."""


def waiting_lines(engine: EngineState) -> list[str]:
    """The tray tooltip's lines for the runs that wait: "Backup: waiting for the disk Backup"."""
    lines = [
        tr("{name}: {reason}", name=run.name, reason=reason_words(run.reason))
        for run in engine.waiting[:WAITING_SHOWN]
    ]
    if len(engine.waiting) > WAITING_SHOWN:
        lines.append(tr("{count} more waiting", count=len(engine.waiting) - WAITING_SHOWN))
    return lines


register(
    "zh",
    {
        "{name}: {reason}": "{name}：{reason}",
        "{count} more waiting": "另有 {count} 个在等待",
        "Did not run: {name}": "未运行：{name}",
    },
)
