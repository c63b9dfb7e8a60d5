"""The seed's interactive demo: what the scheduler does at each wake, through the real decision.

Its work is bounded whoever calls it (the CLI, a JSON-RPC client): at most ``MAX_WAKES`` wakes, in
order, none more than ``MAX_SPAN`` after ``last_due``, all inside ``EARLIEST``..``LATEST``. Counting
the dues a wake skipped costs time in proportion to the span (the counter walks the zone's offset
changes 3 days at a time), so a span of 8,000 years cost 6 s per wake and ten such requests froze
the app for 90 s; ten years cost a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from domi_desktop.cron import parse, zone_for
from domi_desktop.errors import ParamError
from domi_desktop.model import (
    CommandAction,
    Conditions,
    Policies,
    Schedule,
    SystemState,
    Trigger,
)
from domi_desktop.scheduler.conditions import Gate, Verdict, gate
from domi_desktop.scheduler.decide import decide
from domi_desktop.scheduler.wake import wake_plan

MAX_WAKES = 1000
MAX_SPAN = timedelta(days=3653)
"""Ten years from ``last_due`` to the last wake."""
EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
"""Instants outside these are refused: near years 1 and 9999 a zone's offset leaves the calendar."""


@dataclass(frozen=True, slots=True)
class Waited:
    """A fire its conditions held: what it waited for, and how the wait ended."""

    gate: Gate
    """The gate's verdict when the fire came: ``wait``, with what it waited for."""
    until: datetime | None
    """When the wait ended; ``None``: not before the simulation's end."""
    verdict: Verdict
    """``run`` when what it waited for came; ``run_anyway`` or ``skip`` when its deadline did
    first; ``wait`` when neither came."""
    deadline: Gate | None = None
    """The gate's verdict at the deadline, when the deadline came first (``run_anyway``,
    ``skip``, or ``run`` when what it waited for came with it)."""

    @property
    def reason(self) -> str:
        """ "waiting for the disk Backup"."""
        return self.gate.reason or ""

    @property
    def outcome(self) -> str | None:
        return None if self.deadline is None else self.deadline.reason

    def to_json(self) -> dict[str, object]:
        return {
            "reason": self.reason,
            "until": self.until.isoformat() if self.until else None,
            "then": self.verdict.value,
            "outcome": self.outcome,
        }


def play_wait(
    conditions: Conditions,
    kind: str,
    due: datetime,
    at: datetime,
    comes: datetime | None,
) -> Waited | None:
    """A fire at ``at`` for ``due`` while the disk, network name or path ``conditions`` wait for
    is away until ``comes`` (``None``: for good), played through the gate; ``None`` when it
    does not wait."""
    if comes is not None and comes <= at:
        return None
    away = SystemState()  # on mains and online: only the resources are missing
    first = gate(conditions, kind, away, due, at, None)
    if first.verdict is not Verdict.wait:
        return None
    if first.until is not None and (comes is None or first.until <= comes):
        later = gate(conditions, kind, away, due, first.until, None)
        return Waited(first, first.until, later.verdict, later)
    return Waited(first, comes, Verdict.wait if comes is None else Verdict.run)


@dataclass(frozen=True, slots=True)
class SimulatedWake:
    at: datetime
    fire: bool
    due: datetime | None
    late: bool
    trigger: Trigger | None
    skipped: tuple[datetime, ...]
    missed_count: int
    run: bool
    """False when a policy records the fire as skipped instead of running it."""
    wake_machine_at: datetime | None = None
    """With ``wake_to_run``: when the machine would be woken next, after this wake (on mains)."""
    waited: Waited | None = None
    """How the conditions held the run while what they wait for was away."""

    def to_json(self) -> dict[str, object]:
        return {
            "at": self.at.isoformat(),
            "fire": self.fire,
            "due": self.due.isoformat() if self.due else None,
            "late": self.late,
            "trigger": self.trigger.value if self.trigger else None,
            "skipped": [moment.isoformat() for moment in self.skipped],
            "missed_count": self.missed_count,
            "wake_machine_at": self.wake_machine_at.isoformat() if self.wake_machine_at else None,
            "waited": self.waited.to_json() if self.waited else None,
        }


def simulate(
    expr: str,
    tz: str,
    last_due: datetime,
    wakes: Sequence[datetime],
    policies: Policies = Policies(),
    away_until: datetime | None = None,
) -> list[SimulatedWake]:
    """Apply the wakes in order; each fire moves ``last_due`` as the store's claim would. What
    the conditions wait for (a disk, a network's name, a path) comes at ``away_until`` (``None``:
    never), and each fire says how it waited (``waited``).

    ``ParamError`` (naming ``last_due`` or ``wakes``) when the request is beyond the limits above.
    """
    check_bounds(last_due, wakes)
    parsed = parse(expr)
    zone = zone_for(tz)
    schedule = Schedule(
        id=0, name="simulation", expr=expr, tz=tz, action=CommandAction(argv=("true",)),
        policies=policies, last_due=last_due,
    )  # fmt: skip
    results = []
    for wake in wakes:
        decision = decide(schedule, wake, expr=parsed, zone=zone)
        if decision is None:
            simulated = SimulatedWake(wake.astimezone(zone), False, None, False, None, (), 0, False)
        else:
            simulated = SimulatedWake(
                at=wake.astimezone(zone),
                fire=True,
                due=decision.due.astimezone(zone),
                late=decision.late,
                trigger=decision.trigger,
                skipped=tuple(moment.astimezone(zone) for moment in decision.skipped()),
                missed_count=decision.missed_count,
                run=decision.run,
                waited=(
                    play_wait(policies.conditions, "command", decision.due, wake, away_until)
                    if decision.run
                    else None
                ),
            )
            schedule = replace(schedule, last_due=decision.due)
        target = wake_plan([schedule], SystemState(), wake) if policies.wake_to_run else None
        if target is not None:
            simulated = replace(simulated, wake_machine_at=target.at.astimezone(zone))
        results.append(simulated)
    return results


def check_bounds(last_due: datetime, wakes: Sequence[datetime]) -> None:
    """Refuse a simulation whose work would not be bounded, naming the parameter at fault."""
    if not EARLIEST <= last_due < LATEST:
        raise ParamError("last_due", f"must be between {_year(EARLIEST)} and {_year(LATEST)}")
    if not wakes:
        raise ParamError("wakes", "needs at least one wake")
    if len(wakes) > MAX_WAKES:
        raise ParamError("wakes", f"has {len(wakes)} wakes, at most {MAX_WAKES}")
    for index, (before, after) in enumerate(pairwise(wakes), start=1):
        if after < before:
            raise ParamError(
                f"wakes[{index}]", "is earlier than the wake before it (give them in order)"
            )
    if not EARLIEST <= wakes[0] < LATEST or not EARLIEST <= wakes[-1] < LATEST:
        raise ParamError("wakes", f"must be between {_year(EARLIEST)} and {_year(LATEST)}")
    if wakes[-1] - last_due > MAX_SPAN:
        raise ParamError(
            "wakes",
            f"the last wake is {(wakes[-1] - last_due).days} days after last_due, "
            f"at most {MAX_SPAN.days} (ten years)",
        )


def _year(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d}"
