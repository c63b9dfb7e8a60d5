"""The words a machine logs and records when a run it started is no longer its own on a shared
store: the machine that re-ran it is named only when such a re-run is on record."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from domi_desktop.model import Run
from domi_desktop.runtime.leases import LeaseKeeper
from domi_desktop.store.claims import Holder
from tests.support.fakes import FakeClock, FakeLoop

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@dataclass
class LostRunStore:
    """A shared store in which run 7 of this machine was taken over by another."""

    rerun_by: str | None
    machine: str = "laptop"
    shared: bool = True
    holder: Holder = field(default_factory=lambda: Holder("laptop", timedelta(seconds=60)))

    def renew_leases(self, run_ids: Collection[int], now: datetime) -> set[int]:
        return set(run_ids)

    def superseded_by(self, run_id: int) -> str | None:
        return self.rerun_by

    def take_over_expired(
        self, now: datetime, schedule_ids: Collection[int] | None = None
    ) -> list[Run]:
        return []


def _why_stopped(rerun_by: str | None) -> str:
    stopped: list[tuple[int, str]] = []

    def stop(run_id: int, why: str) -> bool:
        stopped.append((run_id, why))
        return True

    keeper = LeaseKeeper(
        LostRunStore(rerun_by),  # type: ignore[arg-type]
        FakeClock(NOW),
        FakeLoop(FakeClock(NOW)),
        running=lambda: [7],
        stop=stop,
        resume=lambda run: None,
        placed_here=lambda: None,
    )
    keeper.tick()
    [(run_id, why)] = stopped
    assert run_id == 7
    return why


def test_the_machine_that_re_ran_the_run_is_named() -> None:
    assert _why_stopped("desktop") == (
        "superseded: its lease expired and machine desktop re-ran it"
    )


@pytest.mark.parametrize("rerun_by", [None, "laptop"])
def test_no_machine_is_said_to_have_re_run_it_when_none_other_did(rerun_by: str | None) -> None:
    why = _why_stopped(rerun_by)
    assert "re-ran it" not in why
    assert "machine another" not in why
    assert why.startswith("superseded: another machine took it over")
