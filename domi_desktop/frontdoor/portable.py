"""Schedules as they travel between machines: the export document (secrets by name only), its
checked reading for an import (all or nothing), and a schedule's JSON back to a value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import (
    Json,
    action_json,
    check_expr,
    check_name,
    check_notes,
    check_zone,
    get_param,
    parse_action,
    parse_policies,
    policies_json,
)
from domi_desktop.model import LOCAL_ZONE, Action, Policies, Schedule

EXPORT_FORMAT = "domi-desktop/schedules"
EXPORT_VERSION = 1
MAX_IMPORT = 10_000
"""Schedules in one import document."""


def portable_json(schedule: Schedule) -> Json:
    """A schedule as it travels between machines: no id, no history, secrets by name only."""
    return {
        "name": schedule.name,
        "expr": schedule.expr,
        "tz": schedule.tz,
        "enabled": schedule.enabled,
        "action": action_json(schedule.action),
        "policies": policies_json(schedule.policies),
        "notes": schedule.notes,
    }


def export_document(schedules: Sequence[Schedule]) -> Json:
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "schedules": [portable_json(schedule) for schedule in schedules],
    }


@dataclass(frozen=True, slots=True)
class Portable:
    """One schedule of an import document, checked: everything a new schedule needs."""

    name: str
    expr: str
    tz: str
    enabled: bool
    action: Action
    policies: Policies
    notes: str
    """'' for none, as in an export made before notes existed."""


def parse_document(document: Any) -> list[Portable]:
    """Every schedule of an export document, or ``ParamError`` naming the first fault (as
    ``schedules[3].action.url``): an import is all or nothing."""
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise ParamError("document", f"is not a domi-desktop export (no format {EXPORT_FORMAT!r})")
    version = document.get("version")
    if type(version) is not int or version != EXPORT_VERSION:  # true and 1.0 equal 1 too
        raise ParamError(
            "document.version",
            f"{version!r} is not supported (this version reads {EXPORT_VERSION})",
        )
    items = document.get("schedules")
    if not isinstance(items, list):
        raise ParamError("document.schedules", "must be a list")
    if len(items) > MAX_IMPORT:
        raise ParamError("document.schedules", f"has {len(items)} entries, at most {MAX_IMPORT}")
    portables = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, dict):
                raise ParamError("", "must be an object")
            enabled = get_param(item, "enabled", bool)
            portables.append(
                Portable(
                    name=check_name(item.get("name")),
                    expr=check_expr(item.get("expr")),
                    tz=check_zone(item.get("tz", LOCAL_ZONE)),
                    enabled=True if enabled is None else enabled,
                    action=parse_action(item.get("action")),
                    policies=parse_policies(item.get("policies")),
                    notes=check_notes(item.get("notes")),
                )
            )
        except ParamError as error:
            where = f"schedules[{index}]" + (f".{error.param}" if error.param else "")
            raise ParamError(where, str(error).split(": ", 1)[-1]) from None
    return portables


def schedule_from_json(value: Json) -> Schedule:
    """A schedule as the service returns it (``schedule.get``), back to a value."""
    return Schedule(
        id=int(value["id"]),
        name=check_name(value.get("name")),
        expr=check_expr(value.get("expr")),
        tz=check_zone(value.get("tz")),
        action=parse_action(value.get("action")),
        enabled=bool(value.get("enabled", True)),
        policies=parse_policies(value.get("policies")),
        notes=check_notes(value.get("notes")),
    )
