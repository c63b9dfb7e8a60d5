"""The cron dialect (Vixie/Debian cron's five fields, Debian's DST rule; docs/cron.md): parse,
next_run, prev_run, upcoming, describe. Pure: stdlib and zoneinfo only."""

from __future__ import annotations

from domi_desktop.cron._count import count_between, fires_before
from domi_desktop.cron._describe import describe
from domi_desktop.cron._eval import FAST_PATH_SPAN, next_run, prev_run, upcoming
from domi_desktop.cron._expr import CronExpr
from domi_desktop.cron._parse import parse
from domi_desktop.cron._zones import (
    LOCAL,
    known_zone,
    local_zone,
    set_local_resolver,
    zone_for,
)
from domi_desktop.errors import CronError, ZoneError

__all__ = [
    "FAST_PATH_SPAN",
    "LOCAL",
    "CronError",
    "CronExpr",
    "ZoneError",
    "count_between",
    "describe",
    "fires_before",
    "known_zone",
    "local_zone",
    "next_run",
    "parse",
    "prev_run",
    "set_local_resolver",
    "upcoming",
    "zone_for",
]
