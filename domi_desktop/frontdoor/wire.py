"""The JSON shapes of schedules, actions, policies and runs, their parsers and their limits.

One source for every front door: the CLI, the JSON-RPC server and the editor read and write these
shapes, and each parser names the parameter at fault (``ParamError.param``) so RPC can answer
-32602 and the CLI exit 2.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from domi_desktop.actions import check_action
from domi_desktop.cron import parse, zone_for
from domi_desktop.errors import ActionError, CronError, ParamError, ZoneError
from domi_desktop.frontdoor.monitor_params import monitor_params
from domi_desktop.frontdoor.triggers import resource_params, session_params
from domi_desktop.model import (
    Action,
    Alerts,
    CatchUp,
    CommandAction,
    Conditions,
    HttpAction,
    OnDeadline,
    Overlap,
    Placement,
    Policies,
    Run,
)
from domi_desktop.scheduler.alerts import check_alerts
from domi_desktop.scheduler.conditions import check_conditions
from domi_desktop.scheduler.opportunity import opportunity_changes
from domi_desktop.scheduler.simulate import EARLIEST, LATEST
from domi_desktop.store.codec import policies_document

Json = dict[str, Any]
MAX_PREVIEW = 1000
MAX_RUNS_PAGE = 10_000
MAX_NAME = 200
"""Characters in a schedule's name."""
MAX_NOTES = 4000
"""Characters in a schedule's notes: a few paragraphs, not a document."""
MAX_SECONDS = 10 * 365 * 86400
"""The longest duration a policy takes (timeouts, windows, backoff, jitter)."""
MAX_ID = 2**63 - 1
"""SQLite's largest integer: a larger id is an error, not an OverflowError from the driver."""
MIN_INT = -(2**63)
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Format characters that reorder the text around them ("Trojan Source")."""


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


# -- JSON shapes -------------------------------------------------------------------------------


def action_json(action: Action) -> Json:
    if isinstance(action, HttpAction):
        return {
            "kind": "http",
            "url": action.url,
            "method": action.method,
            "headers": dict(action.headers),
            "secret_headers": dict(action.secret_headers),
            "body": action.body,
            "timeout": action.timeout,
        }
    return {
        "kind": "command",
        "argv": list(action.argv),
        "shell": action.shell,
        "cwd": action.cwd,
        "env": dict(action.env),
        "secret_env": dict(action.secret_env),
        "stdin": action.stdin,
    }


def policies_json(policies: Policies) -> Json:
    """The store's shape: one shape for the policies, wherever they are written."""
    return policies_document(policies)


_EXTRA_POLICIES = ("conditions", "alerts", "session", "monitor")


def parse_conditions(value: Any, base: Conditions = Conditions()) -> Conditions:
    """``policies.conditions``: the fields given change ``base``; null is the defaults."""
    if value is None:
        return Conditions()
    p = "policies.conditions."
    if not isinstance(value, dict):
        raise ParamError("policies.conditions", "must be an object")
    known = set(Conditions.__dataclass_fields__)
    unknown = set(value) - known
    if unknown:
        raise ParamError(f"{p}{sorted(unknown)[0]}", "is not a condition")
    changes: dict[str, Any] = {}
    for name in ("requires_network", "unmetered_only", "on_ac_power", "stop_if_lost", "keep_awake"):
        if name in value:
            flag = get_param(value, name, bool)
            if flag is None and name != "requires_network":
                raise ParamError(f"{p}{name}", "must be true or false")
            changes[name] = flag
    for name in ("metered_after", "wait_at_most"):
        if name in value:
            changes[name] = duration_param(value, name, p)
    if "min_battery_percent" in value:
        changes["min_battery_percent"] = get_param(value, "min_battery_percent", int)
    raw = get_param(value, "on_deadline", str)
    if raw is not None:
        try:
            changes["on_deadline"] = OnDeadline(raw)
        except ValueError:
            raise ParamError(f"{p}on_deadline", f"must be run or skip, not {raw!r}") from None
    changes.update(resource_params(value, p))
    changes.update(opportunity_changes(value, p))
    conditions = Conditions(**{**_fields(base), **changes})
    check_conditions(conditions, "policies.conditions")
    return conditions


def parse_alerts(value: Any, base: Alerts | None = None) -> Alerts | None:
    """``policies.alerts``: null means the app's defaults."""
    if value is None:
        return None
    p = "policies.alerts."
    if not isinstance(value, dict):
        raise ParamError("policies.alerts", "must be an object or null")
    unknown = set(value) - set(Alerts.__dataclass_fields__)
    if unknown:
        raise ParamError(f"{p}{sorted(unknown)[0]}", "is not an alert setting")
    changes: dict[str, Any] = {}
    for name in ("notify_every", "auto_pause_after"):
        if name in value:
            changes[name] = get_param(value, name, int)
    for name in ("cooldown", "stale_after"):
        if name in value:
            changes[name] = duration_param(value, name, p)
    if "notify_recovery" in value:
        flag = get_param(value, "notify_recovery", bool)
        if flag is None:
            raise ParamError(f"{p}notify_recovery", "must be true or false")
        changes["notify_recovery"] = flag
    alerts = Alerts(**{**_fields(base or Alerts()), **changes})
    check_alerts(alerts, "policies.alerts")
    return alerts


def _fields(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__dataclass_fields__}


def run_json(run: Run) -> Json:
    duration = run.duration
    return {
        "id": run.id,
        "schedule_id": run.schedule_id,
        "due": iso(run.due),
        "fired_at": iso(run.fired_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "status": run.status.value,
        "reason": run.reason,
        "trigger": run.trigger.value,
        "late": run.late,
        "missed_count": run.missed_count,
        "exit_code": run.exit_code,
        "output_tail": run.output_tail,
        "resumed_from": run.resumed_from,
        "log_path": run.log_path,
        "attempt": run.attempt,
        "duration": None if duration is None else duration.total_seconds(),
    }


# -- reading requests --------------------------------------------------------------------------


def check_values(params: Mapping[str, Any], *, numbers: bool = True) -> None:
    """Refuse what no parameter may hold, naming where it is (``action.argv[2]``): integers beyond
    SQLite's 64 bits and non-finite numbers (unless not ``numbers``), and lone surrogates
    (``"\\ud800"`` in JSON, undecodable bytes in a command line), which no database or terminal
    can write as text."""
    stack: list[tuple[str, Any]] = [("", dict(params))]
    while stack:
        path, value = stack.pop()
        if isinstance(value, bool) or (not numbers and isinstance(value, (int, float))):
            continue
        if isinstance(value, int) and not MIN_INT <= value <= MAX_ID:
            shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
            raise ParamError(path, f"{shown} is out of range ({MIN_INT} to {MAX_ID})")
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamError(path, "must be a finite number")
        if isinstance(value, str):
            _check_text(value, path)
        elif isinstance(value, dict):
            for key, item in value.items():
                name = str(key)
                _check_text(name, f"{path}.{name!a}".lstrip("."))
                stack.append((f"{path}.{name}".lstrip("."), item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ParamError(
            path,
            f"is not valid text: a lone surrogate (U+{ord(text[error.start]):04X}) at position "
            f"{error.start + 1} (bytes that are not UTF-8?)",
        ) from None


def get_param(
    params: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = False
) -> Any:
    if name not in params or params[name] is None:
        if required:
            raise ParamError(name, "is required")
        return None
    value = params[name]
    if (kind is int or kind == (int, float)) and isinstance(value, bool):
        raise ParamError(name, f"must be a number, not {value!r}")
    if not isinstance(value, kind):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise ParamError(name, f"must be {expected}, not {type(value).__name__}")
    return value


def pairs_param(params: Mapping[str, Any], name: str, prefix: str) -> tuple[tuple[str, str], ...]:
    value = get_param(params, name, (dict, list))
    if value is None:
        return ()
    items = value.items() if isinstance(value, dict) else value
    pairs = []
    for item in items:
        if not (
            isinstance(item, (list, tuple))
            and len(item) == 2
            and all(isinstance(p, str) for p in item)
        ):
            raise ParamError(f"{prefix}{name}", f"entries must be name/value strings, not {item!r}")
        pairs.append((item[0], item[1]))
    return tuple(pairs)


def duration_param(params: Mapping[str, Any], name: str, prefix: str) -> timedelta | None:
    value = get_param(params, name, (int, float))
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS:
        raise ParamError(f"{prefix}{name}", f"must be a number of seconds >= 0, not {value!r}")
    return timedelta(seconds=value)


def parse_action(value: Any) -> Action:
    if not isinstance(value, dict):
        raise ParamError("action", "must be an object with a 'kind' of 'command' or 'http'")
    kind = value.get("kind", "command")
    p = "action."
    if kind == "http":
        timeout = duration_param(value, "timeout", p)
        action: Action = HttpAction(
            url=get_param(value, "url", str, required=True),
            method=(get_param(value, "method", str) or "GET").upper(),
            headers=pairs_param(value, "headers", p),
            secret_headers=pairs_param(value, "secret_headers", p),
            body=get_param(value, "body", str),
            timeout=30.0 if timeout is None else timeout.total_seconds(),
        )
    elif kind == "command":
        argv = get_param(value, "argv", list) or []
        if not all(isinstance(arg, str) for arg in argv):
            raise ParamError("action.argv", "must be a list of strings")
        action = CommandAction(
            argv=tuple(argv),
            shell=get_param(value, "shell", str),
            cwd=get_param(value, "cwd", str),
            env=pairs_param(value, "env", p),
            secret_env=pairs_param(value, "secret_env", p),
            stdin=get_param(value, "stdin", str),
        )
    else:
        raise ParamError("action.kind", f"must be 'command' or 'http', not {kind!r}")
    try:
        check_action(action)
    except ActionError as error:
        raise ParamError("action", str(error)) from None
    return action


def parse_policies(value: Any, base: Policies = Policies()) -> Policies:
    if value is None:
        return base
    if not isinstance(value, dict):
        raise ParamError("policies", "must be an object")
    p = "policies."
    # A one-off's instant and a hold are set by ``at``, skip and snooze, never as policies.
    known = set(policies_json(base)) | set(_EXTRA_POLICIES) | PLACEMENT_KEYS
    known |= {"once_at", "hold", "background"}
    unknown = set(value) - known
    if unknown:
        raise ParamError(f"{p}{sorted(unknown)[0]}", "is not a policy")
    changes: dict[str, Any] = {}
    for name, enum in (("catch_up", CatchUp), ("overlap", Overlap)):
        raw = get_param(value, name, str)
        if raw is not None:
            try:
                changes[name] = enum(raw)
            except ValueError:
                allowed = ", ".join(member.value for member in enum)
                raise ParamError(f"{p}{name}", f"must be one of {allowed}, not {raw!r}") from None
    for name in ("catch_up_within", "timeout"):
        if name in value:
            changes[name] = duration_param(value, name, p)
    for name in ("retry_backoff", "jitter"):
        if value.get(name) is not None:
            changes[name] = duration_param(value, name, p)
    if "concurrency_key" in value:
        changes["concurrency_key"] = get_param(value, "concurrency_key", str)
    retries = get_param(value, "retries", int)
    if retries is not None:
        if not 0 <= retries <= 100:
            raise ParamError(f"{p}retries", f"must be between 0 and 100, not {retries}")
        changes["retries"] = retries
    if "conditions" in value:
        changes["conditions"] = parse_conditions(value["conditions"], base.conditions)
    if "alerts" in value:
        changes["alerts"] = parse_alerts(value["alerts"], base.alerts)
    changes.update(session_params(value, base.session) | monitor_params(value, base.monitor))
    for flag in ("wake_to_run", "background"):
        given = get_param(value, flag, bool)
        changes.update({} if given is None else {flag: given})
    changes.update(placement_params(value, base))
    fields = {name: getattr(base, name) for name in policies_json(Policies())}
    fields.update(
        conditions=base.conditions,
        alerts=base.alerts,
        placement=base.placement,
        machines=base.machines,
        once_at=base.once_at,
        hold=base.hold,
        background=base.background,
    )
    return Policies(**{**fields, **changes})


PLACEMENT_KEYS = frozenset({"placement", "machines"})
MAX_MACHINES = 100
"""Machines a schedule may name."""


def placement_params(value: Mapping[str, Any], base: Policies) -> dict[str, Any]:
    """``policies.placement`` and ``policies.machines``: named machines need at least one name,
    and names only mean something with ``machines`` (switching away from it forgets them)."""
    p = "policies."
    placement = base.placement
    raw = get_param(value, "placement", str)
    if raw is not None:
        try:
            placement = Placement(raw)
        except ValueError:
            allowed = ", ".join(member.value for member in Placement)
            raise ParamError(f"{p}placement", f"must be one of {allowed}, not {raw!r}") from None
    listed = get_param(value, "machines", list)
    if raw is None and listed:
        placement = Placement.machines
    names = base.machines if placement is Placement.machines else ()
    if listed is not None:
        if not all(isinstance(name, str) for name in listed):
            raise ParamError(f"{p}machines", "must be a list of machine names")
        names = tuple(dict.fromkeys(name.strip() for name in listed))
        for name in names:
            if not name or len(name) > 64 or not name.isprintable():
                raise ParamError(
                    f"{p}machines", f"{name!r} is not a machine name (1 to 64 printable characters)"
                )
        if len(names) > MAX_MACHINES:
            raise ParamError(f"{p}machines", f"names at most {MAX_MACHINES} machines")
    if placement is Placement.machines and not names:
        raise ParamError(f"{p}machines", "must name at least one machine with placement machines")
    if placement is not Placement.machines and names:
        raise ParamError(
            f"{p}placement", f"must be machines to name machines, not {placement.value!r}"
        )
    return {"placement": placement, "machines": names}


def check_expr(expr: Any, param: str = "expr") -> str:
    if not isinstance(expr, str):
        raise ParamError(param, "must be a cron expression string")
    try:
        parse(expr)
    except CronError as error:
        raise ParamError(param, error.message) from None
    return expr


def check_zone(tz: Any, param: str = "tz") -> str:
    if not isinstance(tz, str):
        raise ParamError(param, "must be an IANA zone name or 'local'")
    try:
        zone_for(tz)
    except ZoneError as error:
        raise ParamError(param, str(error)) from None
    return tz


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ParamError("name", "must be a non-empty string")
    if len(name) > MAX_NAME:
        raise ParamError("name", f"is too long (at most {MAX_NAME} characters)")
    for index, char in enumerate(name):
        if is_control(char):
            raise ParamError(
                "name",
                f"has a control character ({unicodedata.name(char, f'U+{ord(char):04X}')}) at "
                f"position {index + 1}: a name is one printable line",
            )
    return name.strip()


def check_notes(notes: Any, param: str = "notes") -> str:
    """A schedule's notes: free text of several lines, kept as written (absent or null: none)."""
    if notes is None:
        return ""
    if not isinstance(notes, str):
        raise ParamError(param, f"must be a string, not {type(notes).__name__}")
    # Text pasted from Windows keeps its line ends; one kind of line end is kept.
    text = notes.replace("\r\n", "\n")
    if len(text) > MAX_NOTES:
        raise ParamError(param, f"is too long ({len(text)} characters, at most {MAX_NOTES})")
    for index, char in enumerate(text):
        if char not in "\n\t" and is_control(char):
            raise ParamError(
                param,
                f"has a control character ({unicodedata.name(char, f'U+{ord(char):04X}')}) at "
                f"position {index + 1}: notes are printable lines of text",
            )
    return text


def is_control(char: str) -> bool:
    """C0 and C1 controls, DEL and the bidi controls: what would let a name rewrite the
    terminal or show itself as another text."""
    return char in BIDI_CONTROLS or unicodedata.category(char) == "Cc"


def id_param(params: Mapping[str, Any], name: str = "id", *, required: bool = True) -> int | None:
    """A schedule or run id: a positive integer SQLite can hold."""
    value = get_param(params, name, int, required=required)
    if value is not None and not 1 <= value <= MAX_ID:
        shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
        raise ParamError(name, f"{shown} is not an id (1 to {MAX_ID})")
    return value  # type: ignore[no-any-return]


def instant_param(text: str, param: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ParamError(param, f"{text!r} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        raise ParamError(param, f"{text!r} needs a UTC offset (e.g. +02:00 or Z)")
    try:
        moment = value.astimezone(UTC)
    except OverflowError:
        moment = EARLIEST if value.year < 2000 else LATEST
    if not EARLIEST <= moment < LATEST:
        raise ParamError(
            param, f"{text!r} is outside {EARLIEST:%Y-%m-%d} to {LATEST:%Y-%m-%d} (UTC)"
        )
    return moment
