"""The parts of a stored policies document that are plain values of the model: the set resource
conditions, the session triggers, the monitor; and seconds as the documents write them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from domi_desktop.model import Conditions, Monitor, SessionTriggers


def seconds(value: timedelta) -> float:
    return value.total_seconds()


def optional_seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def resource_conditions(c: Conditions) -> dict[str, Any]:
    """The resource conditions that are set: a document without them reads as before them."""
    found = {"volume": c.volume, "network_name": c.network_name, "path_exists": c.path_exists}
    return {key: value for key, value in found.items() if value is not None}


def session_triggers(s: SessionTriggers) -> dict[str, Any]:
    return {
        "at_login": s.at_login,
        "at_unlock": s.at_unlock,
        "on_resume": s.on_resume,
        "before_sleep": s.before_sleep,
        "min_interval": optional_seconds(s.min_interval),
        "only": s.only,
    }


def monitor_document(m: Monitor) -> dict[str, Any]:
    return {
        "healthchecks_url": m.healthchecks_url,
        "healthchecks_key": m.healthchecks_key,
        "healthchecks_api": m.healthchecks_api,
        "grace": seconds(m.grace),
        "webhook": m.webhook,
    }
