"""``schedule skip ID`` and ``schedule snooze ID SPAN`` (each with ``--undo``)."""

from __future__ import annotations

import argparse
import re
from datetime import timedelta
from typing import Any

from domi_desktop.cli.backend import backend
from domi_desktop.cli.render import emit, printable, when
from domi_desktop.errors import UsageError

_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_DAYS = 366
"""The longest snooze (the service's limit too)."""


def parse_span(text: str) -> timedelta:
    """``90s``, ``10m``, ``1h``, ``1h30m``, ``2d``; a bare number is minutes."""
    words = text.strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(?:\.\d+)?", words):
        words += "m"
    parts = _PART.findall(words)
    if not words or "".join(n + u for n, u in parts) != words:
        raise UsageError(f"snooze: {text!r} is not a time span such as 10m, 1h or 1h30m")
    seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    if not 0 < seconds <= MAX_DAYS * 86400:
        raise UsageError(f"snooze: {text!r} is not between a second and {MAX_DAYS} days")
    return timedelta(seconds=seconds)


def skip_schedule(args: argparse.Namespace) -> int:
    with backend(args) as api:
        shown = api.call("schedule.skip", {"id": args.id, "undo": args.undo})
    return emit(args, shown, _said)


def snooze_schedule(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"id": args.id, "undo": args.undo}
    if not args.undo:
        if args.span is None:
            raise UsageError("snooze: say for how long, such as: schedule snooze 3 1h")
        params["seconds"] = parse_span(args.span).total_seconds()
    with backend(args) as api:
        shown = api.call("schedule.snooze", params)
    return emit(args, shown, _said)


def _said(shown: dict[str, Any]) -> None:
    name, tz = printable(shown["name"]), shown["tz"]
    snoozed = shown.get("snoozed")
    if shown.get("skipping"):
        print(f"{name}: skipping {when(shown['skipping'], tz)} (undo: --undo)")
    elif snoozed:
        print(
            f"{name}: the run due {when(snoozed['due'], tz)} waits until "
            f"{when(snoozed['until'], tz)}, recorded late"
        )
    else:
        print(f"{name}: runs as planned, next {when(shown['next_run'], tz)}")
