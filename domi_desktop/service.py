"""One service layer for the CLI (store opened directly) and the RPC server (the running app).

It takes and returns JSON-shaped values, validates everything a person or a client can send, and
names the parameter at fault (``ParamError.param``) so RPC can answer -32602 and the CLI exit 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from domi_desktop.actions import check_action
from domi_desktop.clock import Clock
from domi_desktop.cron import describe, next_run, parse, upcoming, zone_for
from domi_desktop.errors import ActionError, CronError, DomiError, ZoneError
from domi_desktop.scheduler.model import (
    LOCAL_ZONE,
    Action,
    CatchUp,
    CommandAction,
    HttpAction,
    Overlap,
    Policies,
    Run,
    RunStatus,
    Schedule,
)
from domi_desktop.scheduler.simulate import simulate
from domi_desktop.store import Store

Json = dict[str, Any]
MAX_PREVIEW = 1000
MAX_RUNS_PAGE = 10_000


class ParamError(DomiError, ValueError):
    """A request parameter that is missing, of the wrong type or invalid; ``param`` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param


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
    def seconds(value: timedelta | None) -> float | None:
        return None if value is None else value.total_seconds()

    return {
        "catch_up": policies.catch_up.value,
        "catch_up_within": seconds(policies.catch_up_within),
        "overlap": policies.overlap.value,
        "concurrency_key": policies.concurrency_key,
        "timeout": seconds(policies.timeout),
        "retries": policies.retries,
        "retry_backoff": policies.retry_backoff.total_seconds(),
        "jitter": policies.jitter.total_seconds(),
    }


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


def _get(
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


def _pairs(params: Mapping[str, Any], name: str, prefix: str) -> tuple[tuple[str, str], ...]:
    value = _get(params, name, (dict, list))
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


def _duration(params: Mapping[str, Any], name: str, prefix: str) -> timedelta | None:
    value = _get(params, name, (int, float))
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or value > 10 * 365 * 86400:
        raise ParamError(f"{prefix}{name}", f"must be a number of seconds >= 0, not {value!r}")
    return timedelta(seconds=value)


def parse_action(value: Any) -> Action:
    if not isinstance(value, dict):
        raise ParamError("action", "must be an object with a 'kind' of 'command' or 'http'")
    kind = value.get("kind", "command")
    p = "action."
    if kind == "http":
        timeout = _duration(value, "timeout", p)
        action: Action = HttpAction(
            url=_get(value, "url", str, required=True),
            method=(_get(value, "method", str) or "GET").upper(),
            headers=_pairs(value, "headers", p),
            secret_headers=_pairs(value, "secret_headers", p),
            body=_get(value, "body", str),
            timeout=30.0 if timeout is None else timeout.total_seconds(),
        )
    elif kind == "command":
        argv = _get(value, "argv", list) or []
        if not all(isinstance(arg, str) for arg in argv):
            raise ParamError("action.argv", "must be a list of strings")
        action = CommandAction(
            argv=tuple(argv),
            shell=_get(value, "shell", str),
            cwd=_get(value, "cwd", str),
            env=_pairs(value, "env", p),
            secret_env=_pairs(value, "secret_env", p),
            stdin=_get(value, "stdin", str),
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
    unknown = set(value) - set(policies_json(base))
    if unknown:
        raise ParamError(f"{p}{sorted(unknown)[0]}", "is not a policy")
    changes: dict[str, Any] = {}
    for name, enum in (("catch_up", CatchUp), ("overlap", Overlap)):
        raw = _get(value, name, str)
        if raw is not None:
            try:
                changes[name] = enum(raw)
            except ValueError:
                allowed = ", ".join(member.value for member in enum)
                raise ParamError(f"{p}{name}", f"must be one of {allowed}, not {raw!r}") from None
    for name in ("catch_up_within", "timeout"):
        if name in value:
            changes[name] = _duration(value, name, p)
    for name in ("retry_backoff", "jitter"):
        if value.get(name) is not None:
            changes[name] = _duration(value, name, p)
    if "concurrency_key" in value:
        changes["concurrency_key"] = _get(value, "concurrency_key", str)
    retries = _get(value, "retries", int)
    if retries is not None:
        if not 0 <= retries <= 100:
            raise ParamError(f"{p}retries", f"must be between 0 and 100, not {retries}")
        changes["retries"] = retries
    fields = {name: getattr(base, name) for name in policies_json(base)}
    return Policies(**{**fields, **changes})


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
    if len(name) > 200:
        raise ParamError("name", "is too long (at most 200 characters)")
    return name.strip()


# -- the service -------------------------------------------------------------------------------


class Service:
    """Schedules, runs, previews and simulations. ``on_change(id)`` tells the app to re-plan."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        on_change: Callable[[int], None] | None = None,
        next_fire: Callable[[int], datetime | None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self._on_change = on_change or (lambda _id: None)
        self._next_fire = next_fire

    def schedule_json(self, schedule: Schedule, lang: str = "en") -> Json:
        return {
            "id": schedule.id,
            "name": schedule.name,
            "expr": schedule.expr,
            "tz": schedule.tz,
            "enabled": schedule.enabled,
            "last_due": iso(schedule.last_due),
            "next_run": iso(self.next_run_of(schedule)),
            "description": _describe(schedule.expr, lang),
            "action": action_json(schedule.action),
            "policies": policies_json(schedule.policies),
            "created_at": iso(schedule.created_at),
            "updated_at": iso(schedule.updated_at),
        }

    def next_run_of(self, schedule: Schedule) -> datetime | None:
        if not schedule.enabled:
            return None
        if self._next_fire is not None:
            return self._next_fire(schedule.id)
        try:
            upcoming = next_run(schedule.expr, self.clock.now(), schedule.tz)
        except DomiError:
            return None
        return None if upcoming is None else upcoming

    def list_schedules(self) -> list[Json]:
        return [self.schedule_json(s) for s in self.store.list_schedules()]

    def get_schedule(self, params: Mapping[str, Any]) -> Json:
        return self.schedule_json(self.store.get_schedule(self._id(params)))

    def create_schedule(self, params: Mapping[str, Any]) -> Json:
        schedule = self.store.create_schedule(
            check_name(params.get("name")),
            check_expr(params.get("expr")),
            check_zone(params.get("tz", LOCAL_ZONE)),
            parse_action(params.get("action")),
            parse_policies(params.get("policies")),
            enabled=bool(_get(params, "enabled", bool) if "enabled" in params else True),
            now=self.clock.now(),
        )
        self._on_change(schedule.id)
        return self.schedule_json(schedule)

    def update_schedule(self, params: Mapping[str, Any]) -> Json:
        schedule_id = self._id(params)
        current = self.store.get_schedule(schedule_id)
        changes: dict[str, Any] = {}
        if "name" in params:
            changes["name"] = check_name(params["name"])
        if "expr" in params:
            changes["expr"] = check_expr(params["expr"])
        if "tz" in params:
            changes["tz"] = check_zone(params["tz"])
        if "action" in params:
            changes["action"] = parse_action(params["action"])
        if "policies" in params:
            changes["policies"] = parse_policies(params["policies"], current.policies)
        if "enabled" in params:
            changes["enabled"] = _get(params, "enabled", bool, required=True)
        schedule = self.store.update_schedule(schedule_id, now=self.clock.now(), **changes)
        self._on_change(schedule_id)
        return self.schedule_json(schedule)

    def set_enabled(self, params: Mapping[str, Any], enabled: bool) -> Json:
        schedule = self.store.set_enabled(self._id(params), enabled, self.clock.now())
        self._on_change(schedule.id)
        return self.schedule_json(schedule)

    def delete_schedule(self, params: Mapping[str, Any]) -> Json:
        schedule_id = self._id(params)
        self.store.delete_schedule(schedule_id)
        self._on_change(schedule_id)
        return {"id": schedule_id, "deleted": True}

    def runs(self, params: Mapping[str, Any]) -> list[Json]:
        schedule_id = _get(params, "schedule_id", int)
        status_text = _get(params, "status", str)
        status = None
        if status_text is not None:
            try:
                status = RunStatus(status_text)
            except ValueError:
                allowed = ", ".join(s.value for s in RunStatus)
                raise ParamError(
                    "status", f"must be one of {allowed}, not {status_text!r}"
                ) from None
        limit = _get(params, "limit", int)
        limit = 100 if limit is None else limit
        if not 1 <= limit <= MAX_RUNS_PAGE:
            raise ParamError("limit", f"must be between 1 and {MAX_RUNS_PAGE}, not {limit}")
        if schedule_id is not None:
            self.store.get_schedule(schedule_id)  # an unknown id is an error, not an empty list
        before = _get(params, "before_id", int)
        runs = self.store.runs(
            schedule_id=schedule_id, status=status, limit=limit, before_id=before
        )
        return [run_json(run) for run in runs]

    def preview(self, params: Mapping[str, Any]) -> Json:
        expr = check_expr(params.get("expr"))
        tz = check_zone(params.get("tz", LOCAL_ZONE))
        count = _get(params, "count", int)
        count = 10 if count is None else count
        if not 1 <= count <= MAX_PREVIEW:
            raise ParamError("count", f"must be between 1 and {MAX_PREVIEW}, not {count}")
        after_text = _get(params, "after", str)
        after = self.clock.now() if after_text is None else _instant(after_text, "after")
        lang = _get(params, "lang", str) or "en"
        if lang not in ("en", "zh"):
            raise ParamError("lang", f"must be 'en' or 'zh', not {lang!r}")
        fires = [fire.isoformat() for fire in islice(upcoming(expr, after, tz), count)]
        return {"expr": expr, "tz": tz, "description": describe(expr, lang), "next": fires}

    def simulate(self, params: Mapping[str, Any]) -> Json:
        expr = check_expr(params.get("expr"))
        tz = check_zone(params.get("tz", LOCAL_ZONE))
        last_due = _instant(_get(params, "last_due", str, required=True), "last_due")
        wakes_raw = _get(params, "wakes", list, required=True)
        wakes = [_instant(w if isinstance(w, str) else "", "wakes") for w in wakes_raw]
        result = simulate(expr, tz, last_due, wakes, parse_policies(params.get("policies")))
        return {"wakes": [wake.to_json() for wake in result]}

    @staticmethod
    def _id(params: Mapping[str, Any]) -> int:
        value = _get(params, "id", int, required=True)
        assert isinstance(value, int)
        return value


def _instant(text: str, param: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ParamError(param, f"{text!r} is not an ISO 8601 date-time") from None
    if value.tzinfo is None:
        raise ParamError(param, f"{text!r} needs a UTC offset (e.g. +02:00 or Z)")
    return value.astimezone(UTC)


def _describe(expr: str, lang: str) -> str:
    try:
        return describe(expr, lang)
    except CronError as error:
        return f"invalid: {error.message}"


Method = Callable[[Service, Mapping[str, Any]], Any]

METHODS: dict[str, Method] = {
    "schedule.list": lambda service, _params: service.list_schedules(),
    "schedule.get": Service.get_schedule,
    "schedule.create": Service.create_schedule,
    "schedule.update": Service.update_schedule,
    "schedule.delete": Service.delete_schedule,
    "schedule.enable": lambda service, params: service.set_enabled(params, True),
    "schedule.disable": lambda service, params: service.set_enabled(params, False),
    "schedule.runs": Service.runs,
    "schedule.preview": Service.preview,
    "schedule.simulate": Service.simulate,
}
"""The methods both front doors share; the app adds run_now, app.* and events.subscribe."""
