"""The runtime on a fake clock, for its unit tests: a real store and real job processes, fakes for
what the machine does (its state, the sleep inhibitor, the wake alarm, input and going back to
sleep).

``RuntimeHarness`` is the one harness of ``tests/unit/runtime``; ``harnesses`` makes them for a
test and stops each one at its end, also when stopping another raised. ``threaded`` gives the
runtime the recorder the app runs (its writes on a thread of its own, the answers posted to the
loop), so a test waits for what it needs by draining the loop.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from domi_desktop.events import Event
from domi_desktop.model import (
    Action,
    Alerts,
    CommandAction,
    Conditions,
    Policies,
    RunStatus,
    Schedule,
    SystemState,
    WakeReason,
)
from domi_desktop.runtime.engine import Runtime
from domi_desktop.runtime.recorder import Recorder
from domi_desktop.runtime.waking import WakeKeeper, WakeTools
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop

START = datetime(2024, 6, 5, 10, 0, tzinfo=UTC)
PATIENCE = 60.0
"""Real seconds a test drains the loop for what it waits on (a safety net: loaded machines)."""


class FakeSource:
    """The machine's state, changed by the test; ``watches``: the OS tells its changes."""

    status = "fake"

    def __init__(self, state: SystemState, *, watches: bool = True) -> None:
        self.state = state
        self.watches = watches
        self.on_change: Callable[[], None] | None = None

    def current(self) -> SystemState:
        return self.state

    def start(self, on_change: Callable[[], None]) -> bool:
        if self.watches:
            self.on_change = on_change
        return self.watches

    def stop(self) -> None:
        self.on_change = None

    def change(self, state: SystemState) -> None:
        self.state = state
        if self.on_change is not None:
            self.on_change()


class FakeHold:
    def __init__(self, inhibitor: FakeInhibitor) -> None:
        self._inhibitor = inhibitor
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._inhibitor.held -= 1


class FakeInhibitor:
    status = "fake"

    def __init__(self) -> None:
        self.held = 0
        self.acquired: list[str] = []

    def acquire(self, why: str) -> FakeHold:
        self.held += 1
        self.acquired.append(why)
        return FakeHold(self)


class FakeAlarm:
    status = "fake alarm"

    def __init__(self) -> None:
        self.armed: datetime | None = None
        self.calls: list[datetime | None] = []

    def capability(self) -> str | None:
        return None

    def arm(self, at: datetime) -> bool:
        self.armed = at
        self.calls.append(at)
        return True

    def cancel(self) -> None:
        self.armed = None
        self.calls.append(None)


class FakeWatch:
    status = "fake watch"

    def __init__(self) -> None:
        self.touched: bool | None = False
        self.marks = 0

    def mark(self) -> None:
        self.marks += 1

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        return self.touched


class FakeSleeper:
    status = "fake sleeper"

    def __init__(self, clock: FakeClock) -> None:
        self.slept: list[datetime] = []
        self.clock = clock

    def sleep(self) -> bool:
        self.slept.append(self.clock.now())
        return True


class SettlingLoop(FakeLoop):
    """The fake loop, which after each timer it fires lets ``settle`` run: with the threaded
    recorder a timer's writes (a fire's claims) are answered on the loop, as they are in the app
    before its next timer, a minute on."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.settle: Callable[[], None] = lambda: None

    def run_due(self) -> int:
        fired = 0
        while True:
            ready = [h for h in self.pending() if h.due <= self.clock.monotonic()]
            if not ready:
                return fired
            handle = min(ready, key=lambda h: h.due)
            handle.cancelled = True
            handle.callback()
            self.settle()
            fired += 1


class RuntimeHarness:
    def __init__(
        self,
        store: Store,
        state: SystemState | None = None,
        *,
        secrets: dict[str, str] | None = None,
        watches: bool = True,
        hold_sleep: bool = True,
        waking: bool = False,
        threaded: bool = True,
        source_type: type[FakeSource] = FakeSource,
        start: datetime = START,
        **options: Any,
    ) -> None:
        """``hold_sleep``: the runtime holds sleep off while a job runs (the fake inhibitor);
        ``waking``: the wake-to-run keeper with a fake alarm, input watch and sleeper (its own
        inhibitor); ``threaded``: the production recorder; ``source_type``: the machine's state's
        fake (one that is told what to watch); ``start``: the fake clock's first reading;
        ``options`` go to ``Runtime``."""
        self.store = store
        self.clock = FakeClock(start)
        self.loop = SettlingLoop(self.clock)
        self.secrets = MemorySecretStore(dict(secrets or {}))
        self.source = source_type(SystemState() if state is None else state, watches=watches)
        self.inhibitor = FakeInhibitor()
        self.wakes: list[tuple[datetime, WakeReason]] = []
        recorder = Recorder(store, self.loop, threaded=threaded)
        self.runtime = Runtime(
            store, self.clock, self.loop, self.secrets, on_wake=self._woke, recorder=recorder,
            conditions=self.source, inhibitor=self.inhibitor if hold_sleep else None, **options,
        )  # fmt: skip
        self.keeper: WakeKeeper | None = None
        if waking:
            self.alarm, self.watch = FakeAlarm(), FakeWatch()
            self.sleeper = FakeSleeper(self.clock)
            self.keeper = WakeKeeper(
                self.runtime,
                lambda: WakeTools(self.alarm, self.watch, self.sleeper),
                state=self.runtime.keeper.state,
                paused=lambda: self.runtime.driver.paused,
                notes=self.runtime.keeper,
                last_wake=lambda: self.runtime.driver.last_wake,
                inhibitor=self.inhibitor,
            )
        self.threaded = threaded
        if threaded:
            self.loop.settle = self.settle
        self.events: list[Event] = []
        self.runtime.subscribe(self.events.append)
        if self.keeper is not None:
            self.runtime.subscribe(self.keeper.observe)

    def start(self) -> None:
        """The runtime started, and what its start wrote answered."""
        self.runtime.start()
        self.settle()

    def settle(self) -> None:
        """Every write handed to the recorder so far done and answered on the loop, and what
        the answers handed over in turn (nothing to do with the synchronous recorder)."""
        if not self.threaded:
            return
        while self._barrier() > 1 or not self.loop.idle():
            pass

    def _barrier(self) -> int:
        """A no-op handed to the recorder, drained for its answer: every write before it is
        done; how many callbacks the loop ran meanwhile (1: the answer alone)."""
        answered: list[object] = []
        self.runtime.recorder.submit(lambda writer: None, answered.append)
        return self.loop.drain(lambda: bool(answered), PATIENCE)

    def _woke(self, plan: WakePlan, reason: WakeReason) -> None:
        self.wakes.append((plan.now, reason))
        if self.keeper is not None:
            self.keeper.woke(plan, reason)

    def add(
        self,
        expr: str,
        action: Action | None = None,
        *,
        conditions: Conditions = Conditions(),
        alerts: Alerts | None = None,
        last_due: datetime = START,
        name: str = "job",
        **policies: Any,
    ) -> Schedule:
        """A schedule in the store (the runtime reads it at its start, or when told); its action
        by default a job that prints a line."""
        action = action or CommandAction(argv=(sys.executable, "-c", "print('ran')"))
        return self.store.create_schedule(
            name, expr, "UTC", action,
            Policies(conditions=conditions, alerts=alerts, **policies), now=last_due,
        )  # fmt: skip

    def edit(self, schedule: Schedule, **changes: Any) -> Schedule:
        """The schedule changed as the app's windows change it (the runtime is told)."""
        updated = self.store.update_schedule(schedule.id, now=self.clock.now(), **changes)
        self.runtime.schedule_changed(schedule.id)
        self.settle()
        return updated

    def wake(self, reason: WakeReason) -> None:
        """The scheduler woken (``reason``), and what the wake wrote answered."""
        self.runtime.driver.wake(reason)
        self.settle()

    def sleep_until(self, when: datetime) -> None:
        """The machine sleeps (the monotonic clock stands still) and resumes at ``when``."""
        self.clock.sleep_machine(when - self.clock.now())
        self.wake(WakeReason.resume)

    def kinds(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def drain_until(self, until: Callable[[], bool], timeout: float = PATIENCE) -> None:
        """Run the loop's posted callbacks until ``until()`` holds. The fake clock stands still
        meanwhile: no timer fires, so what happens here comes from the events themselves (a
        condition's change, a job's end, a write's answer). Then the writes handed over
        meanwhile are settled (a run's end is told before its result is on record)."""
        self.loop.drain(until, timeout)
        self.settle()

    def finished(self, count: int) -> None:
        """Drain until ``count`` runs have finished since the start."""
        self.drain_until(lambda: len(self.kinds("run.finished")) >= count)

    def statuses(self, schedule: Schedule) -> list[RunStatus]:
        """The schedule's runs' statuses, oldest first."""
        return [r.status for r in reversed(self.store.runs(schedule_id=schedule.id))]

    def run_now(self, schedule_id: int) -> int:
        """``Runtime.run_now``'s run id, draining the loop for the answer (a threaded recorder
        posts it there)."""
        answers: list[int | Exception] = []
        self.runtime.run_now(schedule_id, answers.append)
        self.drain_until(lambda: bool(answers))
        (outcome,) = answers
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def stop(self) -> None:
        with contextlib.ExitStack() as stops:
            stops.callback(self.runtime.stop, wait=5)
            if self.keeper is not None:
                stops.callback(self.keeper.close)  # first: it watches the runtime's events


@contextlib.contextmanager
def harnesses(store: Store, **defaults: Any) -> Iterator[Callable[..., RuntimeHarness]]:
    """A maker of harnesses on ``store`` (``defaults`` for each, a call's own keywords over
    them), each stopped at the end, also when stopping another raised."""
    made: list[RuntimeHarness] = []

    def build(state: SystemState | None = None, **options: Any) -> RuntimeHarness:
        given = {**defaults, **options} | ({} if state is None else {"state": state})
        harness = RuntimeHarness(store, **given)
        made.append(harness)
        return harness

    try:
        yield build
    finally:
        with contextlib.ExitStack() as stops:
            for harness in made:
                stops.callback(harness.stop)
