"""What each target can say of the opportunity conditions: a window's hours and the user's
absence. No server scheduler starts a job "at the first moment inside 22:00-06:00 that
qualifies"; Task Scheduler alone knows the user's absence (its idle settings), but on the user's
return it stops the task (``StopOnIdleEnd``) or restarts it from zero (``RestartOnIdle``), never
pauses it."""

from __future__ import annotations

from domi_desktop.export._common import ExportTarget, Losses
from domi_desktop.model import OnReturn


def drop_opportunities(losses: Losses) -> None:
    """The losses of every target but Task Scheduler's idle settings (``idle_settings``)."""
    c = losses.schedule.policies.conditions
    target = losses.target.value
    if c.window is not None:
        losses.drop(
            f"the window {c.window.text}: {target} starts the job at the expression's time, not"
            " at the first moment inside the window when its conditions hold, and records no"
            " skipped night"
        )
    if c.away is None:
        return
    if losses.target is not ExportTarget.windows_task:
        losses.drop(f"the wait for you to step away: {target} cannot tell whether you are there")
    elif c.on_return is OnReturn.pause:
        losses.drop(
            "pausing the job when you come back: Task Scheduler stops it and starts it again from"
            " the beginning at the next idle (StopOnIdleEnd, RestartOnIdle)"
        )


def idle_settings(losses: Losses) -> list[str]:
    """Task Scheduler's idle settings for a schedule that waits for the user to step away."""
    c = losses.schedule.policies.conditions
    if c.away is None:
        return []
    minutes = max(1, round(c.away.total_seconds() / 60))
    stop = c.on_return is not OnReturn.carry_on
    return [
        "<RunOnlyIfIdle>true</RunOnlyIfIdle>",
        f"<IdleSettings><Duration>PT{minutes}M</Duration><WaitTimeout>PT0S</WaitTimeout>"
        f"<StopOnIdleEnd>{str(stop).lower()}</StopOnIdleEnd>"
        f"<RestartOnIdle>{str(stop).lower()}</RestartOnIdle></IdleSettings>",
    ]
