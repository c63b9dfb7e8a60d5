"""Which schedules this machine may claim: the scheduler's source with the others left out.

A schedule placed on other machines (``Policies.placement``), or whose action needs a secret this
machine's keyring lacks (on a shared store), is never planned here: its dues are claimed by the
machines it belongs to, and no due of it is recorded skipped or lost by this one. The reason is
kept (``not_here``) for ``app.status`` and logged when it first applies.

On a shared store every wake re-reads the schedules (the other machines' claims move
``last_due``, which the store's change counter leaves out on purpose), and nothing is read or claimed
while the link to the database is known to be lost (``link_lost``): the first wake after it is
back re-reads everything, and the normal catch-up rule decides the dues passed meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime, timedelta

from domi_desktop.errors import DomiError, StoreError
from domi_desktop.model import CommandAction, Placement, Schedule
from domi_desktop.ports import SecretStore
from domi_desktop.runtime.changes import ChangeFeed
from domi_desktop.runtime.source import StoreSource
from domi_desktop.store import Store

log = logging.getLogger(__name__)

UNREACHABLE = "shared store unreachable"
CLOCK_SKEW = timedelta(minutes=2)
"""How far apart the clocks of machines sharing a store may be without one seeming set back."""


def secret_names(schedule: Schedule) -> tuple[str, ...]:
    """The keyring names the schedule's action reads at fire time."""
    action = schedule.action
    pairs = action.secret_env if isinstance(action, CommandAction) else action.secret_headers
    return tuple(dict.fromkeys(name for _, name in pairs))


def placed_elsewhere(schedule: Schedule, machine: str) -> str | None:
    """Why ``machine`` may not run ``schedule`` by its placement, or None when it may."""
    policies = schedule.policies
    if policies.placement is Placement.machines and machine not in policies.machines:
        return f"placed on {', '.join(policies.machines)}, not on {machine}"
    return None


class PlacedSource(StoreSource):
    """``StoreSource`` without the schedules this machine must leave to others."""

    def __init__(
        self, store: Store, secrets: SecretStore, changes: ChangeFeed | None = None
    ) -> None:
        super().__init__(store, changes)
        self._secrets = secrets
        self.not_here: dict[int, str] = {}
        self.link_problem: str | None = None
        self._names: frozenset[str] | None = None
        """The keyring's names, read at most once a wake (None: not read in this wake)."""

    # -- the link to a shared store -------------------------------------------------------------

    def link_lost(self, problem: str | None) -> None:
        """The listener's news: the shared store is unreachable (``problem``) or back (None)."""
        self.link_problem = problem

    def unavailable(self) -> str | None:
        """What keeps the store from being claimed from, in words true of its kind: a SQLite
        file sealed after another took its place is not "unreachable" (None: nothing does)."""
        if self.link_problem is None:
            return None
        return UNREACHABLE if self._store.shared else self.link_problem

    def _reachable(self) -> None:
        if self.link_problem is not None and self._store.shared:
            raise StoreError(f"{UNREACHABLE}: nothing shared fires here until it is back")
        if self.link_problem is not None:
            raise StoreError(self.link_problem)

    # -- the source ---------------------------------------------------------------------------

    def load(self) -> tuple[list[Schedule], dict[int, str]]:
        if not self._store.shared:
            schedules, broken = super().load()
        else:
            schedules, broken = self._store.read_schedules()
            self._read(schedules)
        placed = [schedule for schedule in schedules if self._here(schedule)]
        self.known = {schedule.id: schedule for schedule in placed}
        return placed, broken

    def get(self, schedule_id: int) -> Schedule | None:
        self._reachable()
        schedule = super().get(schedule_id)
        if schedule is None:
            self.not_here.pop(schedule_id, None)
            return None
        if not self._here(schedule):
            self.known.pop(schedule_id, None)
            return None
        return schedule

    def changed(self) -> bool:
        """At the start of every wake: a fresh look at the keyring, and on a shared store a
        re-read of every schedule (another machine's claims and edits, a secret added)."""
        self._reachable()
        self._names = None
        return True if self._store.shared else super().changed()

    def rebase(self, schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
        """On a shared store a ``last_due`` a little ahead of this clock is another machine's
        clock running ahead, not this one set back: left alone, it is planned from as it is."""
        skewed = expected is not None and expected - last_due <= CLOCK_SKEW
        if self._store.shared and skewed:
            return False
        return super().rebase(schedule_id, expected, last_due)

    def placed_here(self) -> Collection[int] | None:
        """The schedules whose expired runs this machine may take over; None: every one."""
        return set(self.known) if self.not_here else None

    # -- internals ----------------------------------------------------------------------------

    def _here(self, schedule: Schedule) -> bool:
        reason = placed_elsewhere(schedule, self._store.machine)
        if reason is None and self._store.shared:
            reason = self._missing_secret(schedule)
        previous = self.not_here.get(schedule.id)
        if reason is None:
            if previous is not None:
                log.info("schedule %s runs here again (%s no more)", schedule.id, previous)
                del self.not_here[schedule.id]
            return True
        if reason != previous:
            log.warning("schedule %s is not claimed here: %s", schedule.id, reason)
        self.not_here[schedule.id] = reason
        return False

    def _missing_secret(self, schedule: Schedule) -> str | None:
        needed = secret_names(schedule)
        if not needed:
            return None
        names = self._keyring()
        for name in needed:
            if name not in names:
                return f"secret {name} is not in this machine's keyring"
        return None

    def _keyring(self) -> frozenset[str]:
        if self._names is None:
            try:
                self._names = frozenset(self._secrets.names())
            except DomiError as error:
                log.warning("the keyring cannot be listed: %s", error)
                self._names = frozenset()
        return self._names
