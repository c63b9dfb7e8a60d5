"""A job the warden stopped (the app froze past its leases) and that no other machine took over is
recorded as the warden's doing and run once more, as a take-over would have."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.actions import warden
from domi_desktop.model import WARDEN_STOPPED, CommandAction, RunStatus, Trigger
from domi_desktop.store import Store
from tests.support.runtime import START, harnesses


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "data", now=START)
    yield opened
    opened.close()


@pytest.fixture
def unrenewed() -> Iterator[warden.Warden]:
    """A warden whose leases are never renewed: the app is as good as frozen."""
    keeper = warden.Warden.start(2.0)
    warden.install(keeper)
    yield keeper
    warden.install(None)
    keeper.close()


def test_a_job_the_warden_stopped_is_recorded_so_and_run_once_more(
    store: Store, tmp_path: Path, unrenewed: warden.Warden
) -> None:
    # The first run waits to be stopped; the one after it ends at once.
    once = (
        "import pathlib, sys, time; p = pathlib.Path(sys.argv[1]);"
        " p.exists() or p.touch() or time.sleep(120)"
    )
    action = CommandAction(argv=(sys.executable, "-c", once, str(tmp_path / "ran-once")))
    with harnesses(store) as make:
        h = make()
        job = h.add("0 11 * * *", action)
        h.start()
        h.run_now(job.id)

        def ended() -> bool:
            runs = store.runs(schedule_id=job.id)
            return len(runs) == 2 and all(r.status is not RunStatus.running for r in runs)

        h.drain_until(ended)
    first, again = sorted(store.runs(schedule_id=job.id), key=lambda run: run.id)
    assert (first.status, first.reason) == (RunStatus.interrupted, WARDEN_STOPPED)
    assert (again.trigger, again.resumed_from, again.status) == (
        Trigger.resumed, first.id, RunStatus.succeeded,
    )  # fmt: skip
