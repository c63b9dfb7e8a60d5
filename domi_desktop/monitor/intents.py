"""What is to be told to the outside monitors, as plain values that survive a restart in the spool.

An intent names its target as the schedule had it when the event happened (a ping URL, or an API
key's *secret name* with the check it needs); never a secret value. ``intents_for`` turns the
engine's events into intents; it is pure.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from domi_desktop.events import Event, FireEvent, RunFinished
from domi_desktop.model import RunStatus, Schedule

HEALTHCHECKS_IO = "https://healthchecks.io"
"""The API of the hosted service; a self-hosted one is ``Monitor.healthchecks_api``."""

_RID_NAMESPACE = uuid.UUID("6f1c3a52-5d1e-4c36-9a0e-2f4b8d7c1e24")


class Kind(StrEnum):
    ping = "ping"
    """A signal to a schedule's check: start, an exit code, fail or log."""
    webhook = "webhook"
    pause = "pause"
    """Pause a check (API key only): the machine is going to sleep."""
    heartbeat = "heartbeat"
    """The machine is awake: its own check, never paused."""
    sync = "sync"
    """Create or update a check from its schedule (API key only)."""


@dataclass(frozen=True, slots=True)
class Check:
    """A check domi makes and keeps equal to the schedule (with an API key)."""

    api: str
    key_secret: str
    name: str
    schedule: str | None = None
    """Cron fields (a cron check) or, with ``timeout``, ``None`` (a simple period check)."""
    tz: str | None = None
    timeout: int | None = None
    grace: int = 1800

    def to_json(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "key_secret": self.key_secret,
            "name": self.name,
            "schedule": self.schedule,
            "tz": self.tz,
            "timeout": self.timeout,
            "grace": self.grace,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Check:
        return cls(
            api=str(data["api"]),
            key_secret=str(data["key_secret"]),
            name=str(data["name"]),
            schedule=data.get("schedule"),
            tz=data.get("tz"),
            timeout=data.get("timeout"),
            grace=int(data.get("grace", 1800)),
        )


@dataclass(frozen=True, slots=True)
class Intent:
    kind: Kind
    signal: str = ""
    """A ping's: ``start``, an exit code (``0``...``255``), ``fail`` or ``log``; a webhook's
    event: ``start``, ``success`` or ``failure``."""
    url: str | None = None
    """A ping URL (the user's), or a webhook's URL."""
    check: Check | None = None
    """The check to make or update first, whose own ping URL is then used."""
    rid: str | None = None
    body: str = ""
    run_id: int | None = None
    """A finished run whose output tail becomes the body (read off the loop thread)."""
    payload: dict[str, Any] = field(default_factory=dict)
    """A webhook's JSON body (the output tail is added as ``output``)."""
    what: str = ""
    """For the log: which schedule, never a URL (a ping URL is a credential of sorts)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "signal": self.signal,
            "url": self.url,
            "check": None if self.check is None else self.check.to_json(),
            "rid": self.rid,
            "body": self.body,
            "run_id": self.run_id,
            "payload": self.payload,
            "what": self.what,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Intent:
        check = data.get("check")
        return cls(
            kind=Kind(data["kind"]),
            signal=str(data.get("signal", "")),
            url=data.get("url"),
            check=None if check is None else Check.from_json(check),
            rid=data.get("rid"),
            body=str(data.get("body", "")),
            run_id=data.get("run_id"),
            payload=dict(data.get("payload") or {}),
            what=str(data.get("what", "")),
        )


def run_uuid(seed: str, run_id: int) -> str:
    """The ``rid`` of a run: a UUID (Healthchecks takes no other) that is the same for the
    start and the end, and after a restart, of the same run of the same store."""
    return str(uuid.uuid5(_RID_NAMESPACE, f"{seed}/{run_id}"))


def check_name(schedule: Schedule) -> str:
    """Unique per schedule in a project: names are what ``unique`` matches on."""
    return f"{schedule.name} (domi #{schedule.id})"


def heartbeat_name(machine: str) -> str:
    return f"domi heartbeat: {machine}"


def intents_for(event: Event, schedule: Schedule, check: Check | None, seed: str) -> list[Intent]:
    """What ``event`` of ``schedule`` tells its monitors; ``check`` is the check it keeps when it
    has an API key (``None`` when the schedule cannot be said to Healthchecks)."""
    monitor = schedule.policies.monitor
    # With an API key the check domi keeps gives the ping URL; else the user's own URL.
    keyed = monitor.healthchecks_key is not None
    url, keep = (None, check) if keyed else (monitor.healthchecks_url, None)
    pings = url is not None or keep is not None
    what = f"schedule {schedule.id}"
    found: list[Intent] = []

    def ping(
        signal: str, rid: str | None = None, body: str = "", run_id: int | None = None
    ) -> None:
        if pings:
            found.append(Intent(Kind.ping, signal, url, keep, rid, body, run_id, what=what))

    def hook(signal: str, payload: dict[str, Any], run_id: int | None = None) -> None:
        if monitor.webhook is not None:
            found.append(
                Intent(Kind.webhook, signal, monitor.webhook, payload=payload, run_id=run_id,
                       what=what)
            )  # fmt: skip

    if isinstance(event, FireEvent):
        rid = run_uuid(seed, event.run_id)
        if event.missed_count:
            ping(
                "log",
                body=f"missed {event.missed_count} run(s) while the machine was asleep or off",
            )
        if event.late and event.due is not None:
            ping(
                "log",
                body=f"late by {_span(event.fired_at - event.due)}: due {event.due.isoformat()}",
            )
        if event.skipped is not None:
            ping("log", body=f"skipped ({event.skipped.value}): due {_iso(event.due)}")
            return found
        ping("start", rid)
        hook("start", {"event": "start", **_fire(event, rid)})
    elif isinstance(event, RunFinished):
        rid = run_uuid(seed, event.run_id)
        ok = event.status is RunStatus.succeeded
        if ok:
            signal = "0"
        elif event.exit_code is not None and 0 < event.exit_code <= 255:
            signal = str(event.exit_code)  # Healthchecks shows the exit status
        else:
            signal = "fail"  # killed (a timeout, a stop), or no process at all
        ping(signal, rid, run_id=event.run_id)
        hook("success" if ok else "failure", {"event": "success" if ok else "failure",
             **_finished(event, rid)}, event.run_id)  # fmt: skip
    return found


def _fire(event: FireEvent, rid: str) -> dict[str, Any]:
    return {"schedule": event.name, "schedule_id": event.schedule_id, "run_id": event.run_id,
            "rid": rid, "due": _iso(event.due), "started_at": event.fired_at.isoformat(),
            "late": event.late, "missed": event.missed_count}  # fmt: skip


def _finished(event: RunFinished, rid: str) -> dict[str, Any]:
    return {"schedule": event.name, "schedule_id": event.schedule_id, "run_id": event.run_id,
            "rid": rid, "status": event.status.value, "exit_code": event.exit_code,
            "reason": event.reason, "duration": event.duration.total_seconds()}  # fmt: skip


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _span(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
