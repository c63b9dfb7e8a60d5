"""Jobs outside the loop's bookkeeping: a manual run waited for here (the CLI's ``run-now`` when
no app runs), and what a dead process left behind."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from domi_desktop.actions import KILL_GRACE, ActionRequest, ActionResult, ActionRunner
from domi_desktop.actions.leftovers import stop_leftovers
from domi_desktop.model import Run, Trigger
from domi_desktop.ports import Clock, SecretStore
from domi_desktop.store import Store, liveness
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
    """Called on the run's thread, not the loop's: the pid must be on record before the job gets
    far, and the store serialises its callers."""
    store.record_job(run_id, pid, liveness.start_marker(pid))


class JobBook:
    """The runtime's record of its jobs' processes, written by the runs' own threads (the pid
    must be on record before the job gets far) on a connection of their own: a job's thread
    waiting for the database's write lock (a wake's transaction) never holds the connection that
    the loop thread reads with.

    Group commit: the thread that finds no write under way writes every pid waiting by then in
    one transaction, and again until none waits; the others wait for their own entry only.
    Hundreds of jobs starting at a minute boundary took a transaction (and an fsync) each, one
    after the other; and waking every waiting thread after each batch (a shared condition) kept
    thousands of threads asking for the GIL while the GUI thread waited behind them.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._writer: Writer | None = None
        self._waiting: list[_Entry] = []
        self._writing = False

    def record(self, run_id: int, pid: int) -> None:
        entry = _Entry(run_id, pid, liveness.start_marker(pid))
        with self._lock:
            self._waiting.append(entry)
            writes, self._writing = not self._writing, True
        while writes:
            with self._lock:
                batch, self._waiting = self._waiting, []
                if not batch:
                    self._writing = writes = False
                    break
            self._write(batch)
        entry.written.wait()
        if entry.error is not None:
            raise entry.error

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def _write(self, batch: list[_Entry]) -> None:
        error: Exception | None = None
        try:
            if self._writer is None:
                self._writer = self._store.writer()
            self._writer.record_jobs([(e.run_id, e.pid, e.started) for e in batch])
        except Exception as failure:  # each waiting thread reports it for its own run
            error = failure
        for entry in batch:
            entry.error = error
            entry.written.set()


@dataclass(slots=True)
class _Entry:
    run_id: int
    pid: int
    started: str | None
    written: threading.Event = field(default_factory=threading.Event)
    error: Exception | None = None


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
