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

from domi_desktop.errors import ParamError
from domi_desktop.model import (
    Action,
    Alerts,
    CatchUp,
    CommandAction,
    Conditions,
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
    OPPORTUNITY,
    opportunity_changes,
    opportunity_fields,
)
from domi_desktop.store._documents import (
    monitor_document,
    optional_seconds,
    resource_conditions,
    seconds,
    session_triggers,
)
from domi_desktop.store._once import decode_once, once_document

ACTION_SHAPE_VERSION = 1
POLICIES_SHAPE_VERSION = 1

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

_E = TypeVar("_E", bound=Enum)
_T = TypeVar("_T")

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


class CodecError(ValueError):
    """A stored document that does not decode; the store raises a ``StoreError`` with the id."""


def to_micros(value: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (exact, any zone normalised)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"naive datetime {value.isoformat()}: the store takes aware datetimes only"
        )
    return (value - _EPOCH) // _MICROSECOND


def to_micros_all(values: Sequence[datetime]) -> list[int]:
    """``to_micros`` of each, at a third of its cost: a wake writes 100,000 instants. A naive one
    cannot be subtracted from the aware epoch."""
    try:
        return [(value - _EPOCH) // _MICROSECOND for value in values]
    except TypeError:
        for value in values:
            to_micros(value)
        raise


def from_micros(value: int) -> datetime:
    return _EPOCH + timedelta(0, 0, value)  # no keyword: a week's read makes 40,000 of these


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


class _Reader:
    """Typed access to one decoded document; every mismatch is a ``CodecError`` naming the key."""

    def __init__(self, text: str, what: str, version: int) -> None:
        try:
            document = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{what} is not valid JSON ({exc})") from None
        if not isinstance(document, dict):
            raise CodecError(f"{what} is not a JSON object")
        self._document: dict[str, Any] = document
        self._what = what
        found = self._get("v", int)
        if found > version:
            raise CodecError(
                f"{what} has shape version {found}, written by a newer domi-desktop "
                f"(this one reads up to {version})"
            )

    def part(self, key: str) -> _Reader | None:
        """The reader of the object under ``key``; ``None`` when it is absent or null."""
        if self._document.get(key) is None:
            return None
        inner = object.__new__(_Reader)
        inner._document = self._get(key, dict)
        inner._what = f"{self._what}.{key}"
        return inner

    def opportunity(self) -> dict[str, Any]:
        """The window and away conditions, as ``Conditions`` changes."""
        given = {key: self._document[key] for key in OPPORTUNITY if key in self._document}
        try:
            return opportunity_changes(given, f"{self._what}.")
        except ParamError as error:
            raise CodecError(str(error)) from None

    def flag(self, key: str, default: bool) -> bool:
        if key not in self._document:
            return default
        return self._get(key, bool)

    def optional_flag(self, key: str) -> bool | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, bool)

    def optional_integer(self, key: str) -> int | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, int)

    def _get(self, key: str, kind: type[_T]) -> _T:
        if key not in self._document:
            raise CodecError(f"{self._what} lacks {key!r}")
        value = self._document[key]
        # bool is an int subclass; a stored true must not pass as a count.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CodecError(f"{self._what}: {key!r} should be {kind.__name__}, not {value!r}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        if default is not None and key not in self._document:
            return default
        return self._get(key, str)

    def optional_text(self, key: str) -> str | None:
        if self._document.get(key) is None:
            return None
        return self._get(key, str)

    def integer(self, key: str, default: int) -> int:
        if key not in self._document:
            return default
        return self._get(key, int)

    def number(self, key: str, default: float) -> float:
        if key not in self._document:
            return default
        value = self._document[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CodecError(f"{self._what}: {key!r} should be a number, not {value!r}")
        return float(value)

    def duration(self, key: str, default: timedelta) -> timedelta:
        return self._to_timedelta(key, self.number(key, default.total_seconds()))

    def optional_duration(self, key: str) -> timedelta | None:
        if self._document.get(key) is None:
            return None
        return self._to_timedelta(key, self.number(key, 0.0))

    def _to_timedelta(self, key: str, seconds: float) -> timedelta:
        try:
            return timedelta(seconds=seconds)
        except OverflowError:
            raise CodecError(f"{self._what}: {key!r} is out of range ({seconds})") from None

    def strings(self, key: str) -> tuple[str, ...]:
        items = self._get(key, list) if key in self._document else []
        if not all(isinstance(item, str) for item in items):
            raise CodecError(f"{self._what}: {key!r} should be a list of strings")
        return tuple(items)

    def pairs(self, key: str) -> Pairs:
        items = self._get(key, list) if key in self._document else []
        result: list[tuple[str, str]] = []
        for item in items:
            if not (
                isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item)
            ):
                raise CodecError(f"{self._what}: {key!r} should be a list of [name, value] pairs")
            result.append((item[0], item[1]))
        return tuple(result)

    def member(self, key: str, enum: type[_E], default: _E) -> _E:
        if key not in self._document:
            return default
        value = self._get(key, str)
        try:
            return enum(value)
        except ValueError:
            raise CodecError(f"{self._what}: unknown {key} {value!r}") from None


# Decoded once per distinct document: most schedules share their policies (the defaults) and
# many their action, and the values are frozen, so 10,000 schedules hold a few objects instead of
# 10,000 copies (11 MB of the tray's memory), and a re-read parses each document once.
_SHARED = 4096


@functools.lru_cache(maxsize=_SHARED)
def decode_action(text: str) -> Action:
    reader = _Reader(text, "action", ACTION_SHAPE_VERSION)
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
    reader = _Reader(text, "policies", POLICIES_SHAPE_VERSION)
    defaults = Policies()
    once_at, hold, background = decode_once(reader)
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


def _decode_conditions(reader: _Reader | None) -> Conditions:
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


def _decode_monitor(reader: _Reader | None) -> Monitor:
    if reader is None:
        return Monitor()
    return Monitor(
        healthchecks_url=reader.optional_text("healthchecks_url"),
        healthchecks_key=reader.optional_text("healthchecks_key"),
        healthchecks_api=reader.optional_text("healthchecks_api"),
        grace=reader.duration("grace", Monitor().grace),
        webhook=reader.optional_text("webhook"),
    )


def _decode_session(reader: _Reader | None) -> SessionTriggers:
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


def _decode_alerts(reader: _Reader | None) -> Alerts | None:
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


def decode_member(enum: type[_E], value: str, what: str) -> _E:
    """A stored enum value; ``what`` names the column for the error message."""
    # A dict, not ``enum(value)``: the enum's call is Python code, ten times dearer, and a
    # week's Timeline decodes two members for each of its 10,000 runs.
    members = _MEMBERS.get(enum)
    if members is None:
        members = _MEMBERS[enum] = {member.value: member for member in enum}
    member = members.get(value)
    if not isinstance(member, enum):
        raise CodecError(f"unknown {what} {value!r}")
    return member


_MEMBERS: dict[type[Enum], dict[object, Enum]] = {}
"""Per enum, its members by stored value."""
