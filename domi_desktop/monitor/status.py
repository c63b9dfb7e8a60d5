"""What the app knows of a schedule's monitors, for a window: each check's page, its state as last
seen, its last ping and last error; and the outcome of a test ping. Plain frozen values, made on
the monitor's threads from what they already hold (no request is made to answer them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from domi_desktop.monitor.intents import Intent, Kind

TEST_SIGNAL = "log"
"""A test ping is a log entry in Healthchecks: it shows in the check's events and changes
nothing else (a success ping would mark a check up that a missed run made down)."""


class CheckState(StrEnum):
    """A check's status as Healthchecks names it, as last seen by this app."""

    new = "new"
    up = "up"
    down = "down"
    paused = "paused"
    started = "started"
    grace = "grace"
    unknown = "unknown"
    """Nothing was told to it or heard from it since the app started."""


class PingKind(StrEnum):
    start = "start"
    success = "success"
    failure = "failure"
    log = "log"
    pause = "pause"
    test = "test"


@dataclass(frozen=True, slots=True)
class CheckStatus:
    """One target of a schedule's monitor: a Healthchecks check, or a webhook."""

    target: str
    """What it is, for a person: ``Healthchecks`` or ``webhook``."""
    url: str | None
    """The check's page in Healthchecks (made with an API key); else the ping or webhook URL."""
    state: CheckState = CheckState.unknown
    last_ping_at: datetime | None = None
    last_ping_kind: PingKind | None = None
    last_error: str | None = None
    waiting: int = 0
    """Pings not delivered yet."""


@dataclass(frozen=True, slots=True)
class PingTrial:
    sent_at: datetime
    status: int | None = None
    """The HTTP status it was answered with; None when it got no proper answer."""
    error: str | None = None
    state: CheckState | None = None
    """The check's state as Healthchecks said right after (a check made with an API key)."""

    @property
    def ok(self) -> bool:
        return self.error is None


def kind_of(signal: str) -> PingKind:
    """A ping's signal (``start``, an exit code, ``fail``, ``log``) as a kind of ping."""
    if signal == "start":
        return PingKind.start
    if signal == "log":
        return PingKind.log
    if signal in ("", "0", "success"):
        return PingKind.success
    return PingKind.failure


def state_after(kind: PingKind, before: CheckState) -> CheckState:
    """What Healthchecks makes of a check's state when it takes a ping of this kind."""
    return {
        PingKind.start: CheckState.started,
        PingKind.success: CheckState.up,
        PingKind.failure: CheckState.down,
        PingKind.pause: CheckState.paused,
    }.get(kind, before)


def parse_state(value: object) -> CheckState:
    try:
        return CheckState(str(value))
    except ValueError:
        return CheckState.unknown


def page_url(api: str, uuid: str) -> str:
    """A check's details page in the Healthchecks web UI (the API's site)."""
    return f"{api.rstrip('/')}/checks/{uuid}/details/"


def delivered_kind(intent: Intent) -> PingKind | None:
    """The kind of ping a delivered intent was; None for a check made or updated."""
    if intent.kind is Kind.pause:
        return PingKind.pause
    if intent.kind in (Kind.ping, Kind.heartbeat):
        return kind_of(intent.signal)
    if intent.kind is Kind.webhook:
        return {"start": PingKind.start, "success": PingKind.success}.get(
            intent.signal, PingKind.failure
        )
    return None
