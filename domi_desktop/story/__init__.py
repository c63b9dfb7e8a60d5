"""The machine's own story: when it was awake, asleep, or without domi-desktop running.

Recorded by the app itself (its start and stop, the OS's sleep and resume signals, the clock gap
when no signal came) and back-filled from the OS's own logs (``oslog``) for what the app missed.
Pure values: the store keeps them, the timeline and ``domi-desktop timeline`` explain dues with
them (``dues``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class SpanKind(StrEnum):
    awake = "awake"
    asleep = "asleep"
    off = "off"
    """The machine may have been on, but domi-desktop was not running."""


class SpanSource(StrEnum):
    """How a span is known; it decides what wins where two disagree (``ranked``)."""

    app = "app"
    """Awake: the app ran; its end is the last heartbeat until the app stops."""
    signal = "signal"
    """Asleep: the OS said when the sleep began and when it ended."""
    resume = "resume"
    """Asleep: only the wake was signalled; it began at the last heartbeat before."""
    gap = "gap"
    """Asleep: no signal, the wall clock ran on while the monotonic one stood still; it began at
    the last heartbeat before."""
    quit = "quit"
    """Off: the app quit."""
    crash = "crash"
    """Off: the app stopped without a word; from its last heartbeat."""
    journal = "journal"
    pmset = "pmset"
    eventlog = "eventlog"
    """Asleep, back-filled from systemd's journal, macOS's ``pmset -g log``, Windows' System log."""


OS_SOURCES = frozenset({SpanSource.journal, SpanSource.pmset, SpanSource.eventlog})


@dataclass(frozen=True, slots=True)
class MachineSpan:
    machine: str
    kind: SpanKind
    start: datetime
    end: datetime
    source: SpanSource
    id: int | None = None
    """The store's id; None for a span not stored yet."""

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True, slots=True)
class Pause:
    """ "Pause all" on ``machine`` from ``start`` to ``end`` (None: paused still), and how many
    dues of its schedules were not run in it (each recorded skipped, reason ``paused``)."""

    machine: str
    start: datetime
    end: datetime | None
    dues: int = 0
    id: int | None = None

    def covers(self, moment: datetime) -> bool:
        return self.start <= moment and (self.end is None or moment <= self.end)


@dataclass(frozen=True, slots=True)
class Sleep:
    """A sleep the OS logged: when it began and when the machine woke."""

    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True)
class Parsed:
    sleeps: tuple[Sleep, ...]
    notes: tuple[str, ...]
    """What was passed over and why (a malformed line, a sleep with no wake): for the log."""


def absent(spans: Iterable[MachineSpan]) -> list[MachineSpan]:
    """The asleep and off spans, by start: what explains a due that did not run on time."""
    return sorted((s for s in spans if s.kind is not SpanKind.awake), key=lambda s: s.start)


def cause_of(
    spans: Sequence[MachineSpan], due: datetime, ran: datetime | None
) -> MachineSpan | None:
    """The asleep or off span that kept ``due`` from running on time: the one covering it, else
    (a due a few seconds before the lid closed) the one ending between it and the run. Asleep
    wins over off where both cover it: the OS's word is more precise than the app's absence."""
    covering = [s for s in spans if s.kind is not SpanKind.awake and s.covers(due)]
    if not covering and ran is not None:
        covering = [
            s
            for s in spans
            if s.kind is not SpanKind.awake and due <= s.end <= ran and s.start >= due
        ]
    if not covering:
        return None
    return min(covering, key=lambda s: (s.kind is not SpanKind.asleep, s.start))


def new_sleeps(found: Iterable[Sleep], known: Iterable[MachineSpan]) -> list[Sleep]:
    """The OS's sleeps that no asleep span on record (nor an earlier one of ``found``)
    overlaps: what a back-fill adds."""
    taken = [(s.start, s.end) for s in known if s.kind is SpanKind.asleep]
    added: list[Sleep] = []
    for sleep in found:
        if sleep.end > sleep.start and not any(
            start < sleep.end and sleep.start < end for start, end in taken
        ):
            added.append(sleep)
            taken.append((sleep.start, sleep.end))
    return added
