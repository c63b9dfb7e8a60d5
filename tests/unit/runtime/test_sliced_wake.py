"""A catch-up of many schedules with the loop's share of the wake sliced (the app's
``slice_budget``): decided and planned across loop turns, claimed in one write, each due exactly
once; a slice whose planning fails fails that wake's fires (none is lost: the next wake owes them
still), and a stop between slices claims nothing. A real SQLite file; the fake loop's turns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.events import FireEvent
from domi_desktop.model import CommandAction, Policies, WakeReason
from domi_desktop.runtime import catchup, engine
from domi_desktop.runtime.engine import Runtime
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from tests.support.fakes import FakeClock, FakeLoop

SCHEDULES = 600
ASLEEP_AT = datetime(2024, 6, 5, 22, 0, 30, tzinfo=UTC)


class Night:
    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store = store
        self.clock = FakeClock(ASLEEP_AT)
        self.loop = FakeLoop(self.clock)
        self.fired: list[FireEvent] = []
        self.wakes: list[WakePlan] = []
        # Skipped, not run: a wake of 600 jobs is not what this is about.
        self.runtime = Runtime(
            store, self.clock, self.loop, MemorySecretStore(), slice_budget=0.0,
            on_wake=lambda plan, _reason: self.wakes.append(plan),
        )  # fmt: skip
        self.runtime.subscribe(lambda e: self.fired.append(e) if isinstance(e, FireEvent) else None)
        self.runtime.start()
        self.turn_until(lambda: bool(self.wakes))
        self.clock.sleep_machine(timedelta(hours=12))
        monkeypatch.setattr(self.runtime.driver, "paused", True)  # every due is a skip

    def resume(self) -> None:
        self.wakes.clear()
        self.runtime.driver.wake(WakeReason.resume)

    def turn_until(self, done: Callable[[], bool]) -> None:
        """The loop's turns: its zero-delay timers (the driver's slices) and posted calls (the
        runtime's slices, the recorder's answers)."""
        self.loop.drain(lambda: self.loop.run_due() >= 0 and done(), timeout=120)


@pytest.fixture
def night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Night]:
    with Store.open(tmp_path / "data", now=ASLEEP_AT) as store:
        for index in range(SCHEDULES):
            store.create_schedule(
                f"job {index}", "* * * * *", "UTC", CommandAction(argv=("true",)),
                Policies(), now=ASLEEP_AT,
            )  # fmt: skip
        night = Night(store, monkeypatch)
        try:
            yield night
        finally:
            night.runtime.stop()


def test_a_sliced_catch_up_turns_the_loop_and_claims_each_due_once(night: Night) -> None:
    night.resume()
    assert night.store.count_runs() == 0 and night.fired == [], "claimed before a turn"
    turns = 0

    def turned() -> bool:
        nonlocal turns
        turns += 1
        return bool(night.wakes)

    night.turn_until(turned)
    assert turns > 10, turns
    assert len(night.fired) == SCHEDULES == len({e.schedule_id for e in night.fired})
    assert not night.wakes[-1].errors
    before = night.store.count_runs()
    night.resume()
    night.turn_until(lambda: bool(night.wakes))
    assert night.store.count_runs() == before and len(night.fired) == SCHEDULES


def test_a_slice_that_fails_to_plan_fails_the_wake_and_the_next_wake_owes_it(
    night: Night, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_claims = catchup.plan_claims
    calls = 0

    def failing_third(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("a bug in the planning")
        return plan_claims(*args)

    monkeypatch.setattr(engine, "plan_claims", failing_third)
    night.resume()
    night.turn_until(lambda: bool(night.wakes))
    errors = dict(night.wakes[-1].errors)
    assert len(errors) == SCHEDULES and engine.PLAN_FAILED in next(iter(errors.values()))
    assert night.store.count_runs() == 0 and night.fired == []

    night.resume()
    night.turn_until(lambda: bool(night.wakes))
    assert len(night.fired) == SCHEDULES == len({e.schedule_id for e in night.fired})


def test_a_stop_between_slices_claims_nothing(night: Night) -> None:
    night.resume()
    night.runtime.stop()
    night.turn_until(lambda: night.loop.run_due() == 0 and night.loop._posted.empty())
    assert night.store.count_runs() == 0 and night.fired == []
