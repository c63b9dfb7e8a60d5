"""Jobs outside the loop's bookkeeping: a manual run waited for here (the CLI's ``run-now`` when
no app runs), and what a dead process left behind (found by its recorded pid, or by the tags of
its environment when the pid never reached the database)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from domi_desktop.actions import KILL_GRACE, ActionRequest, ActionResult, ActionRunner, identity
from domi_desktop.actions.leftovers import stop_leftovers, stop_processes
from domi_desktop.errors import StoreUnavailable
from domi_desktop.model import Run, Trigger
from domi_desktop.ports import Clock, Loop, SecretStore
from domi_desktop.store import Store

log = logging.getLogger(__name__)


def record_result(store: Store, run_id: int, result: ActionResult) -> bool:
    return store.finish_run(
        run_id,
        status=result.status,
        finished_at=result.finished_at,
        exit_code=result.exit_code,
        reason=result.reason,
        output_tail=result.output_tail,
    )


def record_job(store: Store, run_id: int, pid: int) -> None:
    """For the CLI's one run, on the job supervisor's thread (not the caller's, which waits for
    the run): the pid must be on record before the job gets far, and the store serialises its
    callers."""
    store.record_job(run_id, pid, identity.start_marker(pid))


def stop_orphaned_jobs(store: Store) -> tuple[dict[int, str], set[int]]:
    """Stop what is left of the jobs of runs whose process died, before anything re-runs them.

    Returns what to add to each run's reason, and the runs whose leftovers would not die.
    """
    notes: dict[int, str] = {}
    unstopped: set[int] = set()
    found = [
        (run_id, stop_leftovers(job, grace=KILL_GRACE))
        for run_id, job in store.orphaned_jobs().items()
    ]
    found += [
        (run_id, stop_processes(processes, grace=KILL_GRACE))
        for run_id, processes in identity.tagged_jobs(store.unrecorded_orphans()).items()
    ]
    for run_id, stopped in found:
        note = stopped.describe()
        if note is None:
            continue
        log.warning("run %s: its process died; %s", run_id, note)
        notes[run_id] = note
        if stopped.survivors:
            unstopped.add(run_id)
    return notes, unstopped


def settle_orphans(
    store: Store,
    clock: Clock,
    loop: Loop,
    resume: Callable[[Run], None],
    stopped: tuple[dict[int, str], set[int]] | None = None,
    delay: float = 1.0,
) -> None:
    """The runs of a dead process: their leftovers stopped first (a read and the process
    table), then recorded interrupted and resumed. Another process holding the database's lock
    delays the recording, tried again with backoff, never the start of the app."""
    notes, unstopped = stopped if stopped is not None else stop_orphaned_jobs(store)
    try:
        orphans = store.interrupt_orphans(clock.now(), notes)
    except StoreUnavailable as error:
        log.warning("runs left by a dead process are settled in %g s: %s", delay, error)
        again = partial(
            settle_orphans, store, clock, loop, resume, (notes, unstopped), min(delay * 2, 60.0)
        )
        loop.call_later(delay, again)
        return
    for orphan in orphans:
        # A second copy beside a job that would not die is what stopping it was to prevent.
        if orphan.id not in unstopped:
            resume(orphan)


def run_here(store: Store, schedule_id: int, clock: Clock, secrets: SecretStore) -> Run:
    """A manual run in this process, waited for (the CLI's ``run-now`` when no app runs)."""
    schedule = store.get_schedule(schedule_id)
    run_id = store.record_manual_run(schedule.id, clock.now(), Trigger.manual)
    log_path = store.log_path_for(run_id)
    store.start_run(run_id, clock.now(), log_path)
    request = ActionRequest(
        schedule.action, run_id, log_path, schedule.policies.timeout,
        background=schedule.policies.background,
    )  # fmt: skip
    result = ActionRunner(clock).run(
        request, secrets=secrets, on_started=lambda pid: record_job(store, run_id, pid)
    )
    record_result(store, run_id, result)
    return store.get_run(run_id)
