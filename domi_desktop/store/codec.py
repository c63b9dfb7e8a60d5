"""Explicit, versioned JSON shapes for actions and policies, and exact timestamps.

A schedule's action and policies are stored as JSON whose shape is written out field by field
(never ``dataclasses.asdict``), so renaming a dataclass field cannot silently change what is on
disk. Enum members are stored by value, timedeltas as seconds. Each document carries ``"v"``: a row
written by a newer domi-desktop is refused rather than half understood.

Datetimes are stored as integer microseconds since the Unix epoch: equality in SQL is then exact,
which the compare-and-set of a fire claim depends on.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, TypeVar

from domi_desktop.model import (
    Action,
    Alerts,
    CatchUp,
    CommandAction,
    Conditions,
    Hold,
    HttpAction,
    Monitor,
    OnDeadline,
    Overlap,
    Pairs,
    Placement,
    Policies,
    RunStatus,
    SessionTriggers,
)
from domi_desktop.scheduler.opportunity import (
    opportunity_fields,
)
from domi_desktop.store._documents import (
    monitor_document,
    optional_seconds,
    resource_conditions,
    seconds,
    session_triggers,
)
from domi_desktop.store._reader import CodecError, Reader

ACTION_SHAPE_VERSION = 1
POLICIES_SHAPE_VERSION = 1


_E = TypeVar("_E", bound=Enum)
_T = TypeVar("_T")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)

RUNNING = RunStatus.running.value
"""A run's ``status`` while it runs, as SQL written out by hand compares it."""
IDS_A_STATEMENT = 500
"""Ids in one ``IN (...)``: under the 999 variables of SQLite's builds before 3.32."""


def marks(param: str, count: int) -> str:
    """``count`` parameter marks (``param``: the driver's ``?`` or ``%s``), comma-separated."""
    return ", ".join([param] * count)


def in_chunks(items: Sequence[_T], size: int = IDS_A_STATEMENT) -> Iterator[Sequence[_T]]:
    """``items`` a statement's worth at a time."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def to_micros(value: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (exact, any zone normalised)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"naive datetime {value.isoformat()}: the store takes aware datetimes only"
        )
    return (value - EPOCH) // MICROSECOND


def to_micros_all(values: Sequence[datetime]) -> list[int]:
    """``to_micros`` of each, at a third of its cost: a wake writes 100,000 instants. A naive one
    cannot be subtracted from the aware epoch."""
    try:
        return [(value - EPOCH) // MICROSECOND for value in values]
    except TypeError:
        for value in values:
            to_micros(value)
        raise


def from_micros(value: int) -> datetime:
    return EPOCH + timedelta(0, 0, value)  # no keyword: a week's read makes 40,000 of these


def optional_micros(value: datetime | None) -> int | None:
    return None if value is None else to_micros(value)


def optional_datetime(value: int | None) -> datetime | None:
    return None if value is None else from_micros(value)


def _pairs(value: Pairs) -> list[list[str]]:
    return [[key, item] for key, item in value]


def encode_action(action: Action) -> str:
    document: dict[str, Any]
    if isinstance(action, CommandAction):
        document = {
            "v": ACTION_SHAPE_VERSION,
            "kind": "command",
            "argv": list(action.argv),
            "shell": action.shell,
            "cwd": action.cwd,
            "env": _pairs(action.env),
            "secret_env": _pairs(action.secret_env),
            "stdin": action.stdin,
        }
    elif isinstance(action, HttpAction):
        document = {
            "v": ACTION_SHAPE_VERSION,
            "kind": "http",
            "url": action.url,
            "method": action.method,
            "headers": _pairs(action.headers),
            "secret_headers": _pairs(action.secret_headers),
            "body": action.body,
            "timeout": action.timeout,
        }
    else:
        raise TypeError(f"not an action: {action!r}")
    return _dumps(document)


def encode_policies(policies: Policies) -> str:
    document: dict[str, Any] = {"v": POLICIES_SHAPE_VERSION, **policies_document(policies)}
    # Said only when on, as placement: rows written before it read the same.
    if not policies.wake_to_run:
        del document["wake_to_run"]
    return _dumps(document)


def policies_document(policies: Policies) -> dict[str, Any]:
    """The policies as JSON values, the same in the store and on the wire: durations in seconds,
    only what differs from the defaults of conditions and alerts, and placement only when placed
    (rows written before placement existed decode to anywhere)."""
    return {
        "catch_up": policies.catch_up.value,
        "catch_up_within": optional_seconds(policies.catch_up_within),
        "overlap": policies.overlap.value,
        "concurrency_key": policies.concurrency_key,
        "timeout": optional_seconds(policies.timeout),
        "retries": policies.retries,
        "retry_backoff": seconds(policies.retry_backoff),
        "jitter": seconds(policies.jitter),
        "wake_to_run": policies.wake_to_run,
        **_conditions_and_alerts(policies),
        **(
            {}
            if policies.placement is Placement.anywhere
            else {"placement": policies.placement.value, "machines": list(policies.machines)}
        ),
        **once_document(policies),
    }


def _conditions_and_alerts(policies: Policies) -> dict[str, Any]:
    """``conditions`` when any is set, ``alerts`` when the schedule has its own: only what differs
    from the defaults, so rows written before conditions read the same."""
    found: dict[str, Any] = {}
    c = policies.conditions
    if c != Conditions():
        found["conditions"] = {
            "requires_network": c.requires_network,
            "unmetered_only": c.unmetered_only,
            "metered_after": optional_seconds(c.metered_after),
            "on_ac_power": c.on_ac_power,
            "min_battery_percent": c.min_battery_percent,
            "wait_at_most": optional_seconds(c.wait_at_most),
            "on_deadline": c.on_deadline.value,
            "stop_if_lost": c.stop_if_lost,
            "keep_awake": c.keep_awake,
        }
        found["conditions"].update(resource_conditions(c))
        found["conditions"].update(opportunity_fields(c))
    if policies.session != SessionTriggers():
        found["session"] = session_triggers(policies.session)
    if policies.monitor != Monitor():
        found["monitor"] = monitor_document(policies.monitor)
    a = policies.alerts
    if a is not None:
        found["alerts"] = {
            "notify_every": a.notify_every,
            "cooldown": optional_seconds(a.cooldown),
            "notify_recovery": a.notify_recovery,
            "auto_pause_after": a.auto_pause_after,
            "stale_after": optional_seconds(a.stale_after),
        }
    return found


def _dumps(document: dict[str, Any]) -> str:
    # allow_nan=False: NaN and Infinity are not JSON; other readers (jq, exports) would choke.
    return json.dumps(document, ensure_ascii=False, sort_keys=True, allow_nan=False)


# Decoded once per distinct document: most schedules share their policies (the defaults) and
# many their action, and the values are frozen, so 10,000 schedules hold a few objects instead of
# 10,000 copies (11 MB of the tray's memory), and a re-read parses each document once.
_SHARED = 4096


@functools.lru_cache(maxsize=_SHARED)
def decode_action(text: str) -> Action:
    reader = Reader(text, "action", ACTION_SHAPE_VERSION)
    kind = reader.text("kind")
    if kind == "command":
        return CommandAction(
            argv=reader.strings("argv"),
            shell=reader.optional_text("shell"),
            cwd=reader.optional_text("cwd"),
            env=reader.pairs("env"),
            secret_env=reader.pairs("secret_env"),
            stdin=reader.optional_text("stdin"),
        )
    if kind == "http":
        return HttpAction(
            url=reader.text("url"),
            method=reader.text("method", default="GET"),
            headers=reader.pairs("headers"),
            secret_headers=reader.pairs("secret_headers"),
            body=reader.optional_text("body"),
            timeout=reader.number("timeout", 30.0),
        )
    raise CodecError(f"action: unknown kind {kind!r}")


@functools.lru_cache(maxsize=_SHARED)
def decode_policies(text: str) -> Policies:
    reader = Reader(text, "policies", POLICIES_SHAPE_VERSION)
    defaults = Policies()
    once_at, hold, background = _decode_once(reader)
    return Policies(
        once_at=once_at,
        hold=hold,
        background=background,
        catch_up=reader.member("catch_up", CatchUp, defaults.catch_up),
        wake_to_run=reader.flag("wake_to_run", defaults.wake_to_run),
        catch_up_within=reader.optional_duration("catch_up_within"),
        overlap=reader.member("overlap", Overlap, defaults.overlap),
        concurrency_key=reader.optional_text("concurrency_key"),
        timeout=reader.optional_duration("timeout"),
        retries=reader.integer("retries", defaults.retries),
        retry_backoff=reader.duration("retry_backoff", defaults.retry_backoff),
        jitter=reader.duration("jitter", defaults.jitter),
        placement=reader.member("placement", Placement, defaults.placement),
        machines=reader.strings("machines"),
        conditions=_decode_conditions(reader.part("conditions")),
        alerts=_decode_alerts(reader.part("alerts")),
        session=_decode_session(reader.part("session")),
        monitor=_decode_monitor(reader.part("monitor")),
    )


def _decode_conditions(reader: Reader | None) -> Conditions:
    defaults = Conditions()
    if reader is None:
        return defaults
    return Conditions(
        requires_network=reader.optional_flag("requires_network"),
        unmetered_only=reader.flag("unmetered_only", defaults.unmetered_only),
        metered_after=reader.optional_duration("metered_after"),
        on_ac_power=reader.flag("on_ac_power", defaults.on_ac_power),
        min_battery_percent=reader.optional_integer("min_battery_percent"),
        wait_at_most=reader.optional_duration("wait_at_most"),
        on_deadline=reader.member("on_deadline", OnDeadline, defaults.on_deadline),
        stop_if_lost=reader.flag("stop_if_lost", defaults.stop_if_lost),
        keep_awake=reader.flag("keep_awake", defaults.keep_awake),
        volume=reader.optional_text("volume"),
        network_name=reader.optional_text("network_name"),
        path_exists=reader.optional_text("path_exists"),
        **reader.opportunity(),
    )


def _decode_monitor(reader: Reader | None) -> Monitor:
    if reader is None:
        return Monitor()
    return Monitor(
        healthchecks_url=reader.optional_text("healthchecks_url"),
        healthchecks_key=reader.optional_text("healthchecks_key"),
        healthchecks_api=reader.optional_text("healthchecks_api"),
        grace=reader.duration("grace", Monitor().grace),
        webhook=reader.optional_text("webhook"),
    )


def _decode_session(reader: Reader | None) -> SessionTriggers:
    if reader is None:
        return SessionTriggers()
    return SessionTriggers(
        at_login=reader.flag("at_login", False),
        at_unlock=reader.flag("at_unlock", False),
        on_resume=reader.flag("on_resume", False),
        before_sleep=reader.flag("before_sleep", False),
        min_interval=reader.optional_duration("min_interval"),
        only=reader.flag("only", False),
    )


def _decode_alerts(reader: Reader | None) -> Alerts | None:
    if reader is None:
        return None
    defaults = Alerts()
    return Alerts(
        notify_every=reader.optional_integer("notify_every"),
        cooldown=reader.optional_duration("cooldown"),
        notify_recovery=reader.flag("notify_recovery", defaults.notify_recovery),
        auto_pause_after=reader.optional_integer("auto_pause_after"),
        stale_after=reader.optional_duration("stale_after"),
    )


def once_document(policies: Policies) -> dict[str, Any]:
    """A one-off's instant, the user's skip or snooze and ``background``: said only when set,
    so rows written before them read the same and need no migration."""
    found: dict[str, Any] = {"background": True} if policies.background else {}
    if policies.once_at is not None:
        found["once_at"] = to_micros(policies.once_at)
    hold = policies.hold
    if hold is not None:
        until = None if hold.until is None else to_micros(hold.until)
        found["hold"] = {"due": to_micros(hold.due), "until": until}
    return found


def _instant(reader: Reader, key: str) -> datetime | None:
    micros = reader.optional_integer(key)
    if micros is None:
        return None
    try:
        return EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        raise CodecError(f"policies: {key!r} is out of range ({micros})") from None


def _decode_once(reader: Reader) -> tuple[datetime | None, Hold | None, bool]:
    """``once_at``, ``hold`` and ``background`` of a policies document."""
    hold = None
    part = reader.part("hold")
    if part is not None:
        due = _instant(part, "due")
        if due is None:
            raise CodecError("policies.hold lacks 'due'")
        hold = Hold(due=due, until=_instant(part, "until"))
    return _instant(reader, "once_at"), hold, reader.flag("background", False)
