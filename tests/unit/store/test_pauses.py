""" "Pause all" on record, on both backends: one pause from on to off with the dues it kept from
running counted in it, closed by the app's stop, settled at the next start after a crash, and
read back after the store is opened again."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from domi_desktop.model import FireClaim, RunStatus, Schedule, SkipReason
from domi_desktop.store import Store, pauses, spans
from domi_desktop.story import Pause

HOUR = timedelta(hours=1)


def _write(store: Store, body: Any) -> Any:
    writer = store.writer()
    try:
        return writer.transact(body)
    finally:
        writer.close()


def _skip_paused(store: Store, schedule: Schedule, due: datetime) -> None:
    last_due = store.get_schedule(schedule.id).last_due
    claim = FireClaim(schedule.id, last_due, due, due, status=RunStatus.skipped,
                      reason=SkipReason.paused)  # fmt: skip
    assert store.claim_fire(claim) is not None


def test_a_pause_is_one_span_with_its_dues_counted_and_survives_a_restart(
    store: Store, schedule: Schedule, now: datetime, data_dir: Path
) -> None:
    machine = store.machine
    start = now + HOUR
    _write(store, lambda cursor: pauses.began(cursor, machine, start))
    # Asked for twice (the tray and the window): still one pause.
    _write(store, lambda cursor: pauses.began(cursor, machine, start + HOUR))
    for hours in (1, 2, 3):
        _skip_paused(store, schedule, start + hours * HOUR - timedelta(minutes=30))
    [open_pause] = store.pauses(now, now + 10 * HOUR)
    assert (open_pause.start, open_pause.end, open_pause.dues) == (start, None, 3)
    end = start + 3 * HOUR
    assert _write(store, lambda cursor: pauses.ended(cursor, machine, end))
    assert not _write(store, lambda cursor: pauses.ended(cursor, machine, end + HOUR))
    # A due after the pause, skipped for another reason, is not the pause's.
    _skip_paused(store, schedule, end + HOUR)
    store.close()
    with Store.open(data_dir, now=now) as again:
        [pause] = again.pauses(now, now + 10 * HOUR)
        assert pause == Pause(machine, start, end, 3, pause.id)
        assert again.pauses(end + HOUR, end + 2 * HOUR) == []
        assert again.pauses(now, now + 10 * HOUR, machine="another") == []
        # History's read: the pause's dues left to it; the one outside any pause listed.
        assert len(again.runs()) == again.count_runs() == 4
        [listed] = again.runs(paused=False)
        assert listed.due == end + HOUR
        assert again.count_runs(status=RunStatus.skipped, paused=False) == 1


def test_a_pause_left_open_by_a_crash_ends_at_the_last_heartbeat(
    store: Store, now: datetime
) -> None:
    machine = store.machine
    _write(store, lambda cursor: spans.started(cursor, machine, now))
    _write(store, lambda cursor: pauses.began(cursor, machine, now + HOUR))
    _write(store, lambda cursor: spans.beat(cursor, machine, now + 2 * HOUR))
    # The app died; it starts again a day later.
    later = now + timedelta(days=1)
    assert _write(store, lambda cursor: pauses.settled(cursor, machine, later))
    [pause] = store.pauses(now, later)
    assert (pause.start, pause.end) == (now + HOUR, now + 2 * HOUR)
    assert not _write(store, lambda cursor: pauses.settled(cursor, machine, later))


def test_pauses_are_pruned_with_the_story_but_never_an_open_one(
    store: Store, now: datetime
) -> None:
    machine = store.machine
    _write(store, lambda cursor: pauses.began(cursor, machine, now))
    _write(store, lambda cursor: pauses.ended(cursor, machine, now + HOUR))
    _write(store, lambda cursor: pauses.began(cursor, machine, now + 2 * HOUR))
    assert _write(store, lambda cursor: pauses.prune(cursor, now + 10 * HOUR)) == 1
    [left] = store.pauses(now, now + 10 * HOUR)
    assert (left.start, left.end) == (now + 2 * HOUR, None)
