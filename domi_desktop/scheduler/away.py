"""When I step away: what a job started because the user was away does when they come back, and
the words its run records ("waited 2 h 14 min for you to step away; paused 3 times, 11 min").

Whether the user is away is ``conditions.stepped_away`` (an input to the gate like the charger);
the idle time and the presence come from the session through ``ports.IdleSource``. Nothing here
reads a clock: the runtime hands in the state and the spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from domi_desktop.model import Conditions, OnReturn, SystemState
from domi_desktop.scheduler.conditions import stepped_away


class ReturnStep(Enum):
    """What the runtime does to a running job of a schedule with ``away``."""

    none = "none"
    pause = "pause"
    """Stop the whole process tree where it is (SIGSTOP; the job object's threads suspended)."""
    resume = "resume"
    stop = "stop"
    """Stop it, and let one new run wait for the next away."""


def came_back(threshold: timedelta, state: SystemState) -> bool:
    """Someone touched the computer since it went idle, or an app now holds off the screensaver;
    an idle time the session cannot tell says nothing."""
    return state.presenting or (state.idle is not None and state.idle < threshold)


def on_return(conditions: Conditions, state: SystemState, *, paused: bool) -> ReturnStep:
    """The step for a running (or ``paused``) job of a schedule that waits for the user to step
    away, given the session's state now."""
    threshold = conditions.away
    if threshold is None or conditions.on_return is OnReturn.carry_on:
        return ReturnStep.none
    if paused:
        return ReturnStep.resume if stepped_away(threshold, state) else ReturnStep.none
    if not came_back(threshold, state):
        return ReturnStep.none
    return ReturnStep.pause if conditions.on_return is OnReturn.pause else ReturnStep.stop


@dataclass(frozen=True, slots=True)
class Pauses:
    """The pauses of one run: how many, and how long they lasted in all."""

    count: int = 0
    total: timedelta = timedelta(0)

    def add(self, span: timedelta) -> Pauses:
        return Pauses(self.count + 1, self.total + max(span, timedelta(0)))


def running_time(elapsed: timedelta, pauses: Pauses) -> timedelta:
    """What a timeout counts: the time the job ran, its pauses left out."""
    return max(timedelta(0), elapsed - pauses.total)


def away_words(waited: timedelta | None, pauses: Pauses = Pauses()) -> str | None:
    """``waited 2 h 14 min for you to step away; paused 3 times, 11 min``; ``None`` when it
    neither waited nor paused."""
    parts: list[str] = []
    if waited is not None and waited >= timedelta(seconds=1):
        parts.append(f"waited {short_span(waited)} for you to step away")
    if pauses.count:
        times = "once" if pauses.count == 1 else "twice" if pauses.count == 2 else None
        said = times or f"{pauses.count} times"
        parts.append(f"paused {said}, {short_span(pauses.total)}")
    return "; ".join(parts) or None


def short_span(span: timedelta) -> str:
    """``2 h 14 min``, ``11 min``, ``40 s``: a History column's length, to the minute past one."""
    seconds = int(span.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    days, rest = divmod(seconds // 60, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} d"] if days else []
    if hours:
        parts.append(f"{hours} h")
    if minutes or not parts:
        parts.append(f"{minutes} min")
    return " ".join(parts)
