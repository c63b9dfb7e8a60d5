"""A schedule turned off while its run waits: the run is given up at once, recorded skipped in
words of its own, and the windows send no "Did not run" notice for it (that notice is for a wait
that ran out)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from domi_desktop.events import RunFinished
from domi_desktop.model import Conditions, OnDeadline, RunStatus
from domi_desktop.runtime.gates import DISABLED_WHILE_WAITING
from domi_desktop.ui import i18n
from domi_desktop.ui.announcer import waited_in_vain
from domi_desktop.ui.history.texts import reason_words
from tests.support.runtime import RuntimeHarness
from tests.unit.runtime.test_conditions_runtime import (
    BATTERY,
    START,
    make,
    marker_job,
    store,
)

__all__ = ["make", "store"]  # the fixtures, shared with the conditions' tests


def test_a_run_waiting_when_its_schedule_is_disabled_is_given_up_without_a_did_not_run(
    make: Callable[..., RuntimeHarness], tmp_path: Path
) -> None:
    h = make(BATTERY)
    conditions = Conditions(
        on_ac_power=True, wait_at_most=timedelta(hours=2), on_deadline=OnDeadline.skip
    )
    job = h.add("0 11 * * *", marker_job(tmp_path / "ran"), conditions=conditions)
    h.runtime.start()
    h.loop.advance(timedelta(hours=1, minutes=30))
    (run,) = h.store.runs(schedule_id=job.id)
    assert run.status is RunStatus.waiting

    h.store.set_enabled(job.id, False, START + timedelta(hours=1, minutes=30))
    h.runtime.schedule_changed(job.id)
    h.loop.advance(timedelta(hours=4))  # past the wait's deadline
    h.drain_until(lambda: h.store.get_run(run.id).status is not RunStatus.waiting, timeout=10)

    run = h.store.get_run(run.id)
    assert run.status is RunStatus.skipped
    assert run.reason == DISABLED_WHILE_WAITING == "the schedule was turned off while it waited"
    finished = [e for e in h.events if isinstance(e, RunFinished) and e.run_id == run.id]
    assert len(finished) == 1 and not waited_in_vain(finished[0])
    assert not (tmp_path / "ran").exists()


def test_history_says_it_in_a_few_words_in_both_languages() -> None:
    assert reason_words(DISABLED_WHILE_WAITING) == "turned off while it waited"
    i18n.set_language("zh")
    try:
        assert reason_words(DISABLED_WHILE_WAITING) == "等待期间计划被停用"
    finally:
        i18n.set_language("en")
