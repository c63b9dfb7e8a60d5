"""The seed's interactive demo: what the scheduler does at each wake, through the real decision."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from domi_desktop.cron import parse, zone_for
from domi_desktop.model import CommandAction, Policies, Schedule, Trigger
from domi_desktop.scheduler.decide import decide


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

    def to_json(self) -> dict[str, object]:
        return {
            "at": self.at.isoformat(),
            "fire": self.fire,
            "due": self.due.isoformat() if self.due else None,
            "late": self.late,
            "trigger": self.trigger.value if self.trigger else None,
            "skipped": [moment.isoformat() for moment in self.skipped],
            "missed_count": self.missed_count,
        }


def simulate(
    expr: str,
    tz: str,
    last_due: datetime,
    wakes: Sequence[datetime],
    policies: Policies = Policies(),
) -> list[SimulatedWake]:
    """Apply the wakes in order; each fire moves ``last_due`` as the store's claim would."""
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
            results.append(
                SimulatedWake(wake.astimezone(zone), False, None, False, None, (), 0, False)
            )
            continue
        results.append(
            SimulatedWake(
                at=wake.astimezone(zone),
                fire=True,
                due=decision.due.astimezone(zone),
                late=decision.late,
                trigger=decision.trigger,
                skipped=tuple(moment.astimezone(zone) for moment in decision.skipped()),
                missed_count=decision.missed_count,
                run=decision.run,
            )
        )
        schedule = replace(schedule, last_due=decision.due)
    return results
