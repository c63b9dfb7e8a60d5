"""The catch-up burst carried out: after a wake, at most ``limit`` catch-up runs go at once, the
others recorded now and started in due order as earlier ones end (the pure admission is
``scheduler.burst``'s)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from domi_desktop.events import BurstEvent, Event
from domi_desktop.model import Trigger
from domi_desktop.runtime.catchup import Pending
from domi_desktop.scheduler.burst import BurstQueue


class _HasRunId(Protocol):
    @property
    def run_id(self) -> int: ...


_A = TypeVar("_A", bound=_HasRunId)


class CatchUpBurst:
    def __init__(self, limit: int, emit: Callable[[Event], None]) -> None:
        self.queue: BurstQueue[int] = BurstQueue(limit)
        self._emit = emit

    def hold_back(self, pending: list[Pending]) -> list[Pending]:
        """Beyond the burst's room a catch-up is recorded now and started when admitted."""
        room = self.queue.limit - len(self.queue.running)
        held: list[Pending] = []
        for each in pending:
            if each.start_now and each.decision.trigger is Trigger.catch_up:
                if room <= 0:
                    each = replace(each, start_now=False)  # noqa: PLW2901
                room -= 1
            held.append(each)
        return held

    def event_of(self, pending: Sequence[Pending]) -> BurstEvent | None:
        """The ``BurstEvent`` the claims of ``pending`` will bring, known before they are made."""
        starting = [
            each for each in pending
            if each.reason is None and each.hold is None and not each.queued
            and each.decision.trigger is Trigger.catch_up
        ]  # fmt: skip
        if len(starting) <= self.queue.limit:
            return None
        return BurstEvent(len(starting), self.queue.limit)

    def admit(
        self, catch_ups: list[tuple[_A, Pending]], parked: dict[int, tuple[_A, Pending]]
    ) -> list[tuple[_A, Pending]]:
        """A wake's catch-up runs, ``limit`` at a time: those that start now; the others are
        ``parked`` by run id until ``ended`` admits them. One ``BurstEvent`` when they queue."""
        if len(catch_ups) > self.queue.limit:
            self._emit(BurstEvent(len(catch_ups), self.queue.limit))
        admitted: list[tuple[_A, Pending]] = []
        for item in catch_ups:
            run_id = item[0].run_id
            parked[run_id] = item
            for ready in self.queue.submit(run_id, item[1].decision.due):
                admitted.append(parked.pop(ready))
        return admitted

    def ended(self, run_id: int) -> tuple[int, ...]:
        """The run ``run_id`` is over (or gone): the catch-up runs that may start now."""
        return self.queue.done(run_id)
