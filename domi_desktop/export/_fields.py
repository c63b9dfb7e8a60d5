"""The parsed expression's field sets, as the day rule and value lists the targets write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domi_desktop.cron import CronExpr

ALL_MINUTES = tuple(range(60))
ALL_HOURS = tuple(range(24))
ALL_DAYS = tuple(range(1, 32))
ALL_MONTHS = tuple(range(1, 13))
ALL_WEEKDAYS = tuple(range(7))


@dataclass(frozen=True, slots=True)
class DayRule:
    """Which days fire, as unions of (days of month, weekdays) pairs that must both match.

    ``None`` means "any". Vixie's rule gives one pair (AND) or two pairs (OR: the days with any
    weekday, and the weekdays on any day)."""

    pairs: tuple[tuple[tuple[int, ...] | None, tuple[int, ...] | None], ...]


def day_rule(expr: CronExpr) -> DayRule:
    days = None if expr.days == ALL_DAYS else expr.days
    weekdays = None if expr.weekdays == ALL_WEEKDAYS else expr.weekdays
    if expr.dom_dow_or and days is not None and weekdays is not None:
        return DayRule(((days, None), (None, weekdays)))
    if expr.dom_dow_or:
        # One field is a full list such as 1-31 or 0-6: OR with "every day" is every day.
        return DayRule(((None, None),))
    return DayRule(((days, weekdays),))


def runs(values: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted values as (first, last) runs of consecutive numbers."""
    out: list[tuple[int, int]] = []
    for value in values:
        if out and out[-1][1] == value - 1:
            out[-1] = (out[-1][0], value)
        else:
            out.append((value, value))
    return out
