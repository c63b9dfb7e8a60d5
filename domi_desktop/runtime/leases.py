"""Leases on a shared store: this machine renews the leases of the runs it runs, stops a job whose
run another machine took over (superseded: nothing more is recorded), and takes over the runs
of machines that vanished, re-running each once. Every ``period`` seconds, on the loop.

On SQLite there is one machine: process liveness (``Store.interrupt_orphans``) is enough and
this keeper does nothing. On a shared store it starts the warden (``actions.warden``), which
stops this machine's jobs if their leases are not renewed in time, before another machine may
take their runs over: a frozen app never leaves a copy running beside the re-run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from domi_desktop.actions import warden
from domi_desktop.errors import DomiError
from domi_desktop.model import Run
from domi_desktop.ports import Clock, Loop, TimerHandle
from domi_desktop.store import Store

log = logging.getLogger(__name__)

SUPERSEDED = "superseded: its lease expired and machine {machine} re-ran it"
TAKEN_OVER = (
    "superseded: another machine took it over after its lease expired; no re-run of it is recorded"
)


def superseded_words(rerun_by: str | None, machine: str) -> str:
    """Why this machine's run was stopped: the re-run's machine is named only when a re-run by
    another machine is on record (a run that was itself a re-run is never re-run again, and the
    taker records its re-run a moment after the take-over)."""
    if rerun_by is None or rerun_by == machine:
        return TAKEN_OVER
    return SUPERSEDED.format(machine=rerun_by)


class LeaseKeeper:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        loop: Loop,
        *,
        running: Callable[[], Collection[int]],
        stop: Callable[[int, str], bool],
        resume: Callable[[Run], None],
        placed_here: Callable[[], Collection[int] | None],
    ) -> None:
        self._store = store
        self._clock = clock
        self._loop = loop
        self._running = running
        self._stop = stop
        self._resume = resume
        self._placed_here = placed_here
        self.period = store.holder.lease.total_seconds() / 3
        self._timer: TimerHandle | None = None
        self._warden: warden.Warden | None = None

    def start(self) -> None:
        if self._store.shared:
            self._warden = warden.Warden.start(self._store.holder.lease.total_seconds())
            warden.install(self._warden)
            self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._warden is not None:
            warden.install(None)
            self._warden.close()
            self._warden = None

    def tick(self) -> None:
        """Renew, stop what was superseded, take over what expired elsewhere."""
        if not self._store.shared:
            return
        now = self._clock.now()
        try:
            lost = self._store.renew_leases(set(self._running()), now)
            if self._warden is not None:
                spent = self._clock.now() - now
                self._warden.held((self._store.holder.lease - spent).total_seconds())
            for run_id in sorted(lost):
                why = superseded_words(self._store.superseded_by(run_id), self._store.machine)
                log.warning("run %s: %s", run_id, why)
                self._stop(run_id, why)
            for run in self._store.take_over_expired(now, self._placed_here()):
                log.warning("run %s: %s; re-running it here", run.id, run.reason)
                self._resume(run)
        except DomiError as error:
            # Without the database nothing shared is decided here: the next tick tries again.
            log.warning("leases not renewed: %s", error)

    def _schedule(self) -> None:
        self._timer = self._loop.call_later(self.period, self._fire)

    def _fire(self) -> None:
        self.tick()
        self._schedule()
