"""What the engine tells its listeners (the tray, the socket's subscribers, the log): frozen
values with a ``kind`` and a JSON shape, one per thing that happened."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from domi_desktop.model import RunStatus, SkipReason, Trigger, WakeReason


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


@dataclass(frozen=True, slots=True)
class FireEvent:
    """A fire was claimed: it runs now (``skipped`` is None) or was recorded as skipped."""

    schedule_id: int
    run_id: int
    name: str
    tz: str
    due: datetime | None
    """None for a manual or resumed run: nothing was due."""
    fired_at: datetime
    trigger: Trigger
    late: bool = False
    missed_count: int = 0
    skipped: SkipReason | None = None

    kind = "schedule.fire"

    def to_json(self) -> dict[str, object]:
        return {
            "schedule_id": self.schedule_id,
            "run_id": self.run_id,
            "due": _iso(self.due),
            "fired_at": self.fired_at.isoformat(),
            "late": self.late,
            "missed_count": self.missed_count,
            "trigger": self.trigger.value,
            "skipped": None if self.skipped is None else self.skipped.value,
            "name": self.name,
            "tz": self.tz,
        }


@dataclass(frozen=True, slots=True)
class LateFire:
    """A due about to run late, as its wake decided it (no run id yet)."""

    schedule_id: int
    name: str
    tz: str
    due: datetime
    fired_at: datetime
    missed_count: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "schedule_id": self.schedule_id,
            "name": self.name,
            "tz": self.tz,
            "due": self.due.isoformat(),
            "fired_at": self.fired_at.isoformat(),
            "missed_count": self.missed_count,
        }


@dataclass(frozen=True, slots=True)
class WakeDecided:
    """What a wake is about to do, said as soon as it is decided, before its claims are on disk
    (a slow disk after a resume must not hold the wake's notification back): the fires that will
    run late. Their ``FireEvent`` follows each once claimed; one another process claims first
    is said of here all the same, and nothing runs that was not claimed."""

    reason: WakeReason
    late: tuple[LateFire, ...]
    burst: BurstEvent | None = None
    """More catch-ups than start at once: its ``BurstEvent`` follows with the claims."""

    kind = "wake.decided"

    def to_json(self) -> dict[str, object]:
        return {
            "reason": self.reason.value,
            "late": [fire.to_json() for fire in self.late],
            "burst": None if self.burst is None else self.burst.to_json(),
        }


@dataclass(frozen=True, slots=True)
class RunFinished:
    """A run ended and its result is recorded."""

    run_id: int
    schedule_id: int
    name: str
    status: RunStatus
    reason: str | None
    exit_code: int | None
    duration: timedelta
    alerted: bool | None = None
    """Whether an ``AlertEvent`` follows (alerts decide what is news); ``None``: nothing
    decided, and a listener notifies each failure as it sees fit."""

    kind = "run.finished"

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "schedule_id": self.schedule_id,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "duration": self.duration.total_seconds(),
        }


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """Writing to the database failed (a full disk, say): results are kept in memory and written
    when it works again. Emitted once per problem, not once per failed write."""

    message: str
    pending: int
    """Run results waiting to be written."""

    kind = "store.problem"

    def to_json(self) -> dict[str, object]:
        return {"message": self.message, "pending": self.pending}


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """A schedule's results became news (``scheduler.alerts``): one notification. ``notice`` is
    the notice kind's value (failing, still_failing, recovered, paused, stale)."""

    schedule_id: int
    name: str
    notice: str
    failures: int = 0
    error: str | None = None
    stale_for: timedelta | None = None
    run_id: int | None = None
    reason: str | None = None
    """The run's own reason (``exit code 3``) for a notice on a result."""

    kind = "schedule.alert"

    def to_json(self) -> dict[str, object]:
        return {
            "schedule_id": self.schedule_id,
            "name": self.name,
            "notice": self.notice,
            "failures": self.failures,
            "error": self.error,
            "stale_for": None if self.stale_for is None else self.stale_for.total_seconds(),
            "run_id": self.run_id,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class BurstEvent:
    """A wake found more catch-up runs than start at once: they go ``limit`` at a time."""

    total: int
    limit: int

    kind = "catch_up.burst"

    def to_json(self) -> dict[str, object]:
        return {"total": self.total, "limit": self.limit}


@dataclass(frozen=True, slots=True)
class RunWaiting:
    """A due run waits for its conditions (``reason`` says which); it starts or is skipped later
    and ``RunFinished`` follows as for any run."""

    run_id: int
    schedule_id: int
    name: str
    due: datetime | None
    reason: str

    kind = "run.waiting"

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "schedule_id": self.schedule_id,
            "name": self.name,
            "due": _iso(self.due),
            "reason": self.reason,
        }


Event = FireEvent | RunFinished | StoreProblem | AlertEvent | BurstEvent | RunWaiting | WakeDecided
