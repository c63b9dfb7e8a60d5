"""Schedules as they travel between machines: the export document (secrets by name only), its
checked reading for an import (all or nothing), and a schedule's JSON back to a value."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
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
    instant_param,
    iso,
    parse_action,
    parse_policies,
    policies_json,
)
from domi_desktop.model import LOCAL_ZONE, Action, Policies, Schedule

EXPORT_FORMAT = "domi-desktop/schedules"
EXPORT_VERSION = 1
MAX_IMPORT = 10_000
"""Schedules in one import document."""
MAX_PIECES = 1_000
"""Pieces of one import sent in several requests."""
MAX_STAGED = 4
"""Imports in pieces kept at once (the oldest unfinished one goes first)."""


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
        # A one-off's instant, said where people and other tools read it (ISO, UTC).
        **(
            {} if schedule.policies.once_at is None else {"once_at": iso(schedule.policies.once_at)}
        ),
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
                    policies=_with_once(item, parse_policies(item.get("policies"))),
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
        policies=_with_once(value, parse_policies(value.get("policies"))),
        notes=check_notes(value.get("notes")),
    )


def _with_once(value: Json, policies: Policies) -> Policies:
    """The policies with the one-off's ``once_at`` of a schedule's JSON, when it has one."""
    once = get_param(value, "once_at", str)
    return policies if once is None else replace(policies, once_at=instant_param(once, "once_at"))


def import_key(items: Sequence[Any]) -> str:
    """The digest of a document's schedules, as imported: the same file gives the same key."""
    text = json.dumps(list(items), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Staged:
    count: int
    started: float
    items: dict[int, list[Any]] = field(default_factory=dict)
    portables: dict[int, list[Portable]] = field(default_factory=dict)


class Pieces:
    """The pieces of imports sent in several requests, kept until the last one arrives."""

    def __init__(self) -> None:
        self._staged: dict[str, _Staged] = {}

    def add(
        self, piece: dict[str, Any], items: list[Any], portables: list[Portable]
    ) -> tuple[list[Any], list[Portable]] | None:
        """The whole document's schedules once every piece came; None while some are missing.
        ``ParamError`` for a piece that does not fit the others."""
        key, index, count = _piece(piece)
        staged = self._staged.get(key)
        if staged is None:
            while len(self._staged) >= MAX_STAGED:
                oldest = min(self._staged, key=lambda k: self._staged[k].started)
                del self._staged[oldest]
            staged = self._staged[key] = _Staged(count, time.monotonic())
        if count != staged.count:
            raise ParamError(
                "piece.count", f"is {count}, but the import's first piece said {staged.count}"
            )
        staged.items[index] = items
        staged.portables[index] = portables
        if sum(len(p) for p in staged.portables.values()) > MAX_IMPORT:
            del self._staged[key]
            raise ParamError("document.schedules", f"has more than {MAX_IMPORT} entries in all")
        if len(staged.items) < count:
            return None
        del self._staged[key]
        order = range(count)
        return (
            [item for i in order for item in staged.items[i]],
            [portable for i in order for portable in staged.portables[i]],
        )


def _piece(piece: dict[str, Any]) -> tuple[str, int, int]:
    key, index, count = piece.get("id"), piece.get("index"), piece.get("count")
    if not isinstance(key, str) or not 0 < len(key) <= 64:
        raise ParamError("piece.id", "must be a string of 1 to 64 characters")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= MAX_PIECES:
        raise ParamError("piece.count", f"must be a number from 1 to {MAX_PIECES}")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
        raise ParamError("piece.index", f"must be a number from 0 to {count - 1}")
    return key, index, count
