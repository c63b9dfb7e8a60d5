"""Jobs outside the loop's bookkeeping: a manual run waited for here (the CLI's ``run-now`` when
no app runs), and what a dead process left behind."""

from __future__ import annotations

import logging
import threading

from domi_desktop.actions import KILL_GRACE, ActionRequest, ActionResult, ActionRunner, identity
from domi_desktop.actions.leftovers import stop_leftovers
from domi_desktop.model import Run, Trigger
from domi_desktop.ports import Clock, SecretStore
from domi_desktop.store import Store
from domi_desktop.store.claims import Writer

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


class JobBook:
    """The runtime's record of its jobs' processes, written on a thread of its own, with a
    connection of its own.

    ``record`` is called by the job supervisor as each job starts, and returns at once: a wake's
    transaction may hold the database's write lock for a while, and every other job's output and
    exit would wait behind the supervisor meanwhile. The job is running either way; what matters
    is that its pid is on record soon, for a later start of the app to stop what a crash left.
    Group commit: what is waiting when a write ends goes in the next transaction, so hundreds of
    jobs starting at a minute boundary are a handful of transactions, not one (and an fsync)
    each.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._waiting: list[tuple[int, int, str | None]] = []
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._closing = False

    def record(self, run_id: int, pid: int) -> None:
        # The marker is read now, while the job's process exists for sure (not yet reaped).
        entry = (run_id, pid, identity.start_marker(pid))
        with self._lock:
            if self._closing:
                log.warning("run %s: its process %s started after the job book closed", run_id, pid)
                return
            self._waiting.append(entry)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_each, name="domi-job-book", daemon=True
                )
                self._thread.start()
        self._ready.set()

    def close(self) -> None:
        """Write what is waiting, then stop."""
        with self._lock:
            self._closing = True
            thread = self._thread
        self._ready.set()
        if thread is not None:
            thread.join()

    def _write_each(self) -> None:
        writer: Writer | None = None
        while True:
            self._ready.wait()
            self._ready.clear()
            with self._lock:
                batch, self._waiting = self._waiting, []
                closing = self._closing
            if batch:
                try:
                    writer = writer or self._store.writer()
                    writer.record_jobs(batch)
                except Exception as error:
                    runs = ", ".join(str(run_id) for run_id, _pid, _started in batch)
                    log.warning("the processes of runs %s could not be recorded: %s", runs, error)
            if closing:
                if writer is not None:
                    writer.close()
                return


def stop_orphaned_jobs(store: Store) -> tuple[dict[int, str], set[int]]:
    """Stop what is left of the jobs of runs whose process died, before anything re-runs them.

    Returns what to add to each run's reason, and the runs whose leftovers would not die.
    """
    notes: dict[int, str] = {}
    unstopped: set[int] = set()
    for run_id, job in store.orphaned_jobs().items():
        stopped = stop_leftovers(job, grace=KILL_GRACE)
        note = stopped.describe()
        if note is None:
            continue
        log.warning("run %s: its process died; %s", run_id, note)
        notes[run_id] = note
        if stopped.survivors:
            unstopped.add(run_id)
    return notes, unstopped


def run_here(store: Store, schedule_id: int, clock: Clock, secrets: SecretStore) -> Run:
    """A manual run in this process, waited for (the CLI's ``run-now`` when no app runs)."""
    schedule = store.get_schedule(schedule_id)
    run_id = store.record_manual_run(schedule.id, clock.now(), Trigger.manual)
    log_path = store.log_path_for(run_id)
    store.start_run(run_id, clock.now(), log_path)
    request = ActionRequest(schedule.action, run_id, log_path, schedule.policies.timeout)
    result = ActionRunner(clock).run(
        request, secrets=secrets, on_started=lambda pid: record_job(store, run_id, pid)
    )
    record_result(store, run_id, result)
    return store.get_run(run_id)
