"""The wire shapes of what a schedule waits for and when else it runs: the resource conditions
in ``policies.conditions`` (a disk, a named network, a path) and the session triggers in
``policies.session``. Apart from ``wire.py`` (at its size cap); it calls these."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from domi_desktop.errors import ParamError
from domi_desktop.model import SessionTriggers
from domi_desktop.scheduler.session import check_session

RESOURCE_FIELDS = ("volume", "network_name", "path_exists")
SESSION_FLAGS = ("at_login", "at_unlock", "on_resume", "before_sleep", "only")
MAX_INTERVAL = timedelta(days=3650)


def resource_params(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The resource conditions given: a string, or null (or "") to wait for none."""
    changes: dict[str, Any] = {}
    for name in RESOURCE_FIELDS:
        if name not in value:
            continue
        raw = value[name]
        if raw is None or raw == "":
            changes[name] = None
        elif isinstance(raw, str):
            changes[name] = raw
        else:
            raise ParamError(f"{prefix}{name}", f"must be a string or null, not {raw!r}")
    return changes


def session_params(value: Mapping[str, Any], base: SessionTriggers) -> dict[str, Any]:
    """``policies.session`` as a change of the policies: ``base`` when it is not given."""
    return {"session": parse_session(value["session"], base) if "session" in value else base}


def parse_session(value: Any, base: SessionTriggers) -> SessionTriggers:
    """``policies.session``: the fields given change ``base``; null is none."""
    p = "policies.session"
    if value is None:
        return SessionTriggers()
    if not isinstance(value, dict):
        raise ParamError(p, "must be an object")
    unknown = set(value) - {*SESSION_FLAGS, "min_interval"}
    if unknown:
        raise ParamError(f"{p}.{sorted(unknown)[0]}", "is not a session trigger")
    fields: dict[str, Any] = {
        name: getattr(base, name) for name in (*SESSION_FLAGS, "min_interval")
    }
    for name in SESSION_FLAGS:
        if name in value:
            if not isinstance(value[name], bool):
                raise ParamError(f"{p}.{name}", "must be true or false")
            fields[name] = value[name]
    if "min_interval" in value:
        fields["min_interval"] = _interval(value["min_interval"], f"{p}.min_interval")
    session = SessionTriggers(**fields)
    check_session(session, p)
    return session


def _interval(raw: Any, where: str) -> timedelta | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise ParamError(where, f"must be a number of seconds or null, not {raw!r}")
    # Compared as a number first: a timedelta of 1e22 seconds cannot be made.
    if not 0 < raw <= MAX_INTERVAL.total_seconds():
        raise ParamError(where, f"must be longer than zero and at most 10 years, not {raw!r}")
    return timedelta(seconds=raw)


def imported_policies(at_login: bool) -> dict[str, Any]:
    """The policies of an imported crontab line: an ``@reboot`` one runs only at login."""
    return {"policies": {"session": {"at_login": True, "only": True}}} if at_login else {}
