"""``preview --window``: the next windows a schedule's runs start in, with their real length."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any

from domi_desktop.cron import CronExpr
from domi_desktop.model import Window
from domi_desktop.scheduler.conditions import format_span
from domi_desktop.scheduler.window import Stretch, parse_window, upcoming_windows
from domi_desktop.timefmt import DST_MARK, with_offset


@dataclass(frozen=True, slots=True)
class PreviewWindow:
    due: datetime
    stretch: Stretch
    zone: tzinfo

    @property
    def document(self) -> dict[str, Any]:
        return {
            "due": self.due.astimezone(self.zone).isoformat(),
            "start": self.stretch.start.astimezone(self.zone).isoformat(),
            "end": self.stretch.end.astimezone(self.zone).isoformat(),
            "seconds": int(self.stretch.length.total_seconds()),
        }

    @property
    def line(self) -> str:
        start = with_offset(self.stretch.start.astimezone(self.zone)).removesuffix(f"  {DST_MARK}")
        end = with_offset(self.stretch.end.astimezone(self.zone)).removesuffix(f"  {DST_MARK}")
        # The length is the point across a DST change: 7 or 9 hours of night instead of 8.
        mark = f"  {DST_MARK}" if self.stretch.length != nominal(self.stretch.window) else ""
        return f"{start} to {end} ({format_span(self.stretch.length)}){mark}"


def nominal(window: Window) -> timedelta:
    """The window's length on a day without a DST change."""
    start = timedelta(hours=window.start.hour, minutes=window.start.minute)
    end = timedelta(hours=window.end.hour, minutes=window.end.minute)
    return end - start + (timedelta(days=1) if window.crosses_midnight else timedelta(0))


def preview_windows(
    args: argparse.Namespace, expr: CronExpr, zone: tzinfo, start: datetime
) -> list[PreviewWindow] | None:
    """``None`` without ``--window``; a bad window is a ``ParamError`` naming ``--window``."""
    if getattr(args, "window", None) is None:
        return None
    window = parse_window(args.window, "--window")
    found = upcoming_windows(expr, zone, window, start, args.n)
    return [PreviewWindow(due, stretch, zone) for due, stretch in found]
