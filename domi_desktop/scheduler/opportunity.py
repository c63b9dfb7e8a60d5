"""The opportunity conditions, a window and the user's absence, as JSON values: one shape for the
store and the wire, said only when set so that a document without them reads as before them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from domi_desktop.errors import ParamError
from domi_desktop.model import AtWindowEnd, Conditions, OnReturn
from domi_desktop.scheduler.window import parse_window

MAX_AWAY = timedelta(days=7)
"""The longest idle time waited for: beyond, nobody is coming back to say it."""
OPPORTUNITY = ("window", "at_window_end", "away", "on_return")


def opportunity_fields(conditions: Conditions) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if conditions.window is not None:
        found["window"] = conditions.window.text
        found["at_window_end"] = conditions.at_window_end.value
    if conditions.away is not None:
        found["away"] = conditions.away.total_seconds()
        found["on_return"] = conditions.on_return.value
    return found


def opportunity_changes(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The fields of ``value`` given (``window``: ``HH:MM-HH:MM`` or null; ``away``: seconds or
    null), as changes of ``Conditions``; a ``ParamError`` naming the field otherwise."""
    changes: dict[str, Any] = {}
    if "window" in value:
        raw = value["window"]
        if raw is None or raw == "":
            changes["window"] = None
        elif isinstance(raw, str):
            changes["window"] = parse_window(raw, f"{prefix}window")
        else:
            raise ParamError(f"{prefix}window", f"must be HH:MM-HH:MM or null, not {raw!r}")
    if "away" in value:
        raw = value["away"]
        if raw is None:
            changes["away"] = None
        elif (
            isinstance(raw, int | float)
            and not isinstance(raw, bool)
            and math.isfinite(raw)
            and 0 < raw <= MAX_AWAY.total_seconds()
        ):
            changes["away"] = timedelta(seconds=raw)
        else:
            raise ParamError(
                f"{prefix}away",
                f"must be a number of seconds within 0..{MAX_AWAY.total_seconds():g}, not {raw!r}",
            )
    for name, kind in (("at_window_end", AtWindowEnd), ("on_return", OnReturn)):
        if name in value:
            try:
                changes[name] = kind(value[name])
            except ValueError:
                choices = " or ".join(member.value for member in kind)
                raise ParamError(
                    f"{prefix}{name}", f"must be {choices}, not {value[name]!r}"
                ) from None
    return changes
