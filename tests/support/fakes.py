"""Test doubles for the injected clock and timer: time moves only when a test says so."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from domi_desktop.model import CommandAction, FireOutcome, Policies, Schedule, WakeReason
from domi_desktop.scheduler.decide import FireDecision

EVENT_DEADLINE = 300.0
"""Real seconds a system test waits for the event it needs before it fails. A safety net against
a hung process, never a measurement: a quiet machine sees each event within seconds, and a loaded
2-core CI took many times that (a 10 s wait for a fleet's take-over failed there)."""


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> object:
    """Poll a real process's visible state until ``condition()`` is truthy (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class FakeClock:
    """Wall and monotonic clocks that move together, unless a test jumps one (sleep, clock set)."""

    def __init__(self, now: datetime) -> None:
        assert now.tzinfo is not None
        self._now = now
        self._mono = 1000.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, delta: timedelta) -> None:
        self._now += delta
        self._mono += delta.total_seconds()

    def sleep_machine(self, delta: timedelta) -> None:
        """Suspend: the wall clock moves on, the monotonic clock stands still (Linux, macOS)."""
        self._now += delta

    def set_wall(self, when: datetime) -> None:
        """Someone set the clock (NTP, the user): only the wall clock jumps."""
        self._now = when


class FakeHandle:
    def __init__(self, timer: FakeTimer, due: float, callback: Callable[[], None]) -> None:
        self.timer, self.due, self.callback, self.cancelled = timer, due, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class FakeTimer:
    """Timers on the fake monotonic clock, fired by ``run_due`` when the test advances time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.armed: list[FakeHandle] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> FakeHandle:
        assert delay >= 0
        handle = FakeHandle(self, self.clock.monotonic() + delay, callback)
        self.armed.append(handle)
        return handle

    def pending(self) -> list[FakeHandle]:
        return [h for h in self.armed if not h.cancelled]

    def next_delay(self) -> float:
        (handle,) = self.pending()
        return handle.due - self.clock.monotonic()

    def run_due(self) -> int:
        """Fire every timer whose time has come on the monotonic clock; returns how many."""
        fired = 0
        while True:
            ready = [h for h in self.pending() if h.due <= self.clock.monotonic()]
            if not ready:
                return fired
            handle = min(ready, key=lambda h: h.due)
            handle.cancelled = True
            handle.callback()
            fired += 1

    def advance(self, delta: timedelta) -> None:
        """Let time pass with the machine awake, firing each timer at its moment."""
        end = self.clock.monotonic() + delta.total_seconds()
        while True:
            upcoming = [h.due for h in self.pending() if h.due <= end]
            target = min(upcoming) if upcoming else end
            self.clock.advance(timedelta(seconds=max(0.0, target - self.clock.monotonic())))
            self.run_due()
            if not upcoming:
                return


class MemoryBook:
    """An in-memory schedule source and fire sink with the store's compare-and-set claim.

    Like the store it keeps every decided due (the run rows): a schedule's initial ``last_due``
    counts as one, as it is in a store where that due was claimed. ``changed`` reports
    ``touch()``, as the store reports another process's commit.
    """

    def __init__(self, *schedules: Schedule) -> None:
        self.schedules = {s.id: s for s in schedules}
        self.fired: list[FireDecision] = []
        self.lost: list[FireDecision] = []
        self.broken: dict[int, str] = {}
        self.decided: dict[int, set[datetime]] = {
            s.id: {s.last_due} for s in schedules if s.last_due is not None
        }
        self._touched = False

    def load(self) -> tuple[list[Schedule], dict[int, str]]:
        self._touched = False
        return list(self.schedules.values()), dict(self.broken)

    def get(self, schedule_id: int) -> Schedule | None:
        return self.schedules.get(schedule_id)

    def touch(self) -> None:
        self._touched = True

    def changed(self) -> bool:
        touched, self._touched = self._touched, False
        return touched

    def rebase(self, schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
        current = self.schedules[schedule_id]
        if current.last_due != expected:
            return False
        self.schedules[schedule_id] = replace(current, last_due=last_due)
        return True

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        found = {}
        for schedule_id, dues in self.decided.items():
            last = self.schedules[schedule_id].last_due
            later = frozenset(due for due in dues if last is not None and due > last)
            if later:
                found[schedule_id] = later
        return found

    def fire_all(
        self,
        decisions: Sequence[FireDecision],
        done: Callable[[Sequence[FireOutcome]], None],
        _reason: WakeReason,
    ) -> None:
        done([FireOutcome(d.schedule_id, self.fire(d)) for d in decisions])

    def fire(self, decision: FireDecision) -> bool:
        current = self.schedules[decision.schedule_id]
        if current.last_due != decision.expected_last_due:
            self.lost.append(decision)
            return False
        self.schedules[current.id] = replace(current, last_due=decision.due)
        self.decided.setdefault(current.id, set()).add(decision.due)
        self.fired.append(decision)
        return True


def command_schedule(
    expr: str, tz: str, last_due: datetime, *, schedule_id: int = 1, **policies: object
) -> Schedule:
    return Schedule(
        id=schedule_id,
        name=f"job {schedule_id}",
        expr=expr,
        tz=tz,
        action=CommandAction(argv=("true",)),
        policies=Policies(**policies),  # type: ignore[arg-type]
        last_due=last_due,
    )


class FakeLoop(FakeTimer):
    """The runtime's loop in tests: timers on the fake clock, ``call_soon`` from any thread."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self._posted: queue.Queue[Callable[[], None]] = queue.Queue()

    def call_soon(self, callback: Callable[[], None]) -> None:
        self._posted.put(callback)

    def drain(self, until: Callable[[], bool], timeout: float = 10.0) -> int:
        """Run posted callbacks (the action threads' results) until ``until()`` holds; how
        many ran."""
        deadline = time.monotonic() + timeout
        ran = 0
        while not until():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for the loop")
            try:
                self._posted.get(timeout=min(remaining, 0.05))()
                ran += 1
            except queue.Empty:
                continue
        return ran

    def idle(self) -> bool:
        """Nothing posted waits to run."""
        return self._posted.empty()
