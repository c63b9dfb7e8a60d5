"""The machine's diary: the app writes its own story (``domi_desktop.story``) as it lives it.

Awake from its start, with a heartbeat written rarely (``HEARTBEAT``) on the scheduler's own
wakes, so a crash is known to the last heartbeat; asleep from the OS's sleep signal to its resume
signal, or, when only the wake (or nothing: the clock gap) was noticed, from the last moment the
app saw the machine awake; off from its stop (or its last heartbeat) to its next start. The OS's
own log of sleeps fills in what the app missed (``back_fill``).

Every write goes through the engine's one writer (``Recorder.submit``), never on the caller's
thread; the callers are the loop's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from domi_desktop.ports import Clock
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.store import Store, pauses, retention, spans
from domi_desktop.store.writer import Writer
from domi_desktop.story import Parsed, Sleep, SpanSource

log = logging.getLogger(__name__)

HEARTBEAT = 300.0
"""Seconds (monotonic) between two heartbeats written: a crash is known to within this."""
GAP = 30.0
"""Seconds the wall clock must run ahead of the monotonic one to be a sleep, not drift."""
ONE_WAKE = 120.0
"""Seconds within which a resume signal and a clock gap are the same wake."""
PRUNE_EVERY = 86_400.0
BACK_FILL = timedelta(days=30)
"""How far back the OS's log of sleeps is read at start."""


class Diary:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        recorder: Recorder,
        *,
        boot_clock: Callable[[], float] | None = None,
    ) -> None:
        """``boot_clock``: seconds on a clock that runs on while the machine sleeps (Linux's
        ``CLOCK_BOOTTIME``), where there is one: it tells a sleep from a wall clock set forward,
        which look the same to the wall and monotonic clocks alone."""
        self._store = store
        self._boot_clock = boot_clock
        self._boot: float | None = None
        self._clock = clock
        self._recorder = recorder
        self._machine = store.machine
        self._seen: tuple[datetime, float] | None = None
        """The last moment the app saw the machine awake: wall and monotonic."""
        self._beaten = 0.0
        self._pruned: float | None = None
        self._woke: float | None = None
        """When (monotonic) a wake was last written."""
        self._asleep = False

    def start(self) -> None:
        now, mono = self._look()
        self._beaten = mono
        self._write(partial(_started, self._machine, now), "the start")
        self._prune(mono)

    def tick(self) -> None:
        """A wake of the scheduler (a minute apart at most): a sleep noticed by the clock gap
        alone is written; else a heartbeat, if one is due."""
        if self._seen is None:
            return
        if self._asleep:  # the wake's signal was lost; this timer firing is the wake
            self.resumed()
            return
        last_wall, last_mono = self._seen
        last_boot = self._boot
        now, mono = self._look()
        if (now - last_wall).total_seconds() - (mono - last_mono) > GAP:
            if self._recent_wake(mono) or not self._slept(last_boot, mono - last_mono):
                return
            self._wake(now, mono, last_wall, SpanSource.gap)
            return
        if mono - self._beaten >= HEARTBEAT:
            self._beaten = mono
            self._write(partial(_beat, self._machine, now), "a heartbeat")
        self._prune(mono)

    def sleeping(self) -> None:
        """The OS says the machine goes to sleep now."""
        if self._seen is None:
            return
        now, _mono = self._look()
        self._asleep = True
        self._write(partial(_falling_asleep, self._machine, now), "the sleep")

    def resumed(self) -> None:
        """The OS says the machine woke now."""
        if self._seen is None:
            return
        last_wall = self._seen[0]
        now, mono = self._look()
        was_asleep, self._asleep = self._asleep, False
        if self._recent_wake(mono) and not was_asleep:
            return  # the clock gap told this wake already
        self._wake(now, mono, last_wall, SpanSource.signal if was_asleep else SpanSource.resume)

    def stop(self) -> None:
        if self._seen is None:
            return
        now, _mono = self._look()
        self._write(partial(_stopped, self._machine, now), "the stop")
        self._seen = None

    def paused(self, on: bool) -> None:
        """ "Pause all" was turned on or off now: one pause on record, from on to off."""
        self._write(partial(_paused, self._machine, self._clock.now(), on), "the pause")

    def back_fill(self, parsed: Parsed, source: SpanSource) -> None:
        """The OS's own log of sleeps (read off the loop): what no asleep span has yet."""
        for note in parsed.notes[:20]:
            log.info("the OS's log of sleeps: %s", note)
        if parsed.sleeps:
            sleeps = list(parsed.sleeps)
            self._write(partial(_back_fill, self._machine, sleeps, source), "the OS's sleeps")

    # -- internals -----------------------------------------------------------------------------

    def _look(self) -> tuple[datetime, float]:
        self._seen = (self._clock.now(), self._clock.monotonic())
        if self._boot_clock is not None:
            self._boot = self._boot_clock()
        return self._seen

    def _slept(self, last_boot: float | None, awake_for: float) -> bool:
        """Whether the gap just seen was a sleep: the boot clock ran on through it (it is a
        sleep too where there is no boot clock to ask)."""
        if last_boot is None or self._boot is None:
            return True
        return (self._boot - last_boot) - awake_for > GAP

    def _recent_wake(self, mono: float) -> bool:
        return self._woke is not None and mono - self._woke < ONE_WAKE

    def _wake(self, now: datetime, mono: float, last_awake: datetime, source: SpanSource) -> None:
        self._woke = mono
        self._beaten = mono
        self._write(partial(_woke, self._machine, now, last_awake, source), "the wake")

    def _prune(self, mono: float) -> None:
        if self._pruned is not None and mono - self._pruned < PRUNE_EVERY:
            return
        self._pruned = mono
        before = self._clock.now() - retention.MAX_AGE
        self._write(partial(_prune, before), "pruning the story")

    def _write(self, task: Callable[[Writer], object], what: str) -> None:
        def done(outcome: object) -> None:
            if isinstance(outcome, Exception):
                log.warning("the machine's story could not record %s: %s", what, outcome)

        self._recorder.submit(task, done)


def _started(machine: str, now: datetime, writer: Writer) -> int:
    def start(cursor: Any) -> int:
        # A pause left open by an app that did not stop ended with it, not now.
        pauses.settled(cursor, machine, now)
        return spans.started(cursor, machine, now)

    return writer.transact(start)


def _paused(machine: str, now: datetime, on: bool, writer: Writer) -> object:
    if on:
        return writer.transact(lambda cursor: pauses.began(cursor, machine, now))
    return writer.transact(lambda cursor: pauses.ended(cursor, machine, now))


def _beat(machine: str, now: datetime, writer: Writer) -> bool:
    return writer.transact(lambda cursor: spans.beat(cursor, machine, now))


def _falling_asleep(machine: str, now: datetime, writer: Writer) -> None:
    writer.transact(lambda cursor: spans.falling_asleep(cursor, machine, now))


def _woke(
    machine: str, now: datetime, last_awake: datetime, source: SpanSource, writer: Writer
) -> int:
    return writer.transact(lambda cursor: spans.woke(cursor, machine, now, last_awake, source))


def _stopped(machine: str, now: datetime, writer: Writer) -> None:
    def stop(cursor: Any) -> None:
        pauses.ended(cursor, machine, now)  # the next start is not paused: the pause ends here
        spans.stopped(cursor, machine, now)

    writer.transact(stop)


def _back_fill(machine: str, sleeps: list[Sleep], source: SpanSource, writer: Writer) -> int:
    return writer.transact(lambda cursor: spans.back_fill(cursor, machine, sleeps, source))


def _prune(before: datetime, writer: Writer) -> int:
    return writer.transact(
        lambda cursor: spans.prune(cursor, before) + pauses.prune(cursor, before)
    )
