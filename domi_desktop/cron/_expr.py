"""The parsed expression and the lookup tables that let evaluation jump field by field."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

DayTables = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _forward(values: tuple[int, ...], size: int) -> tuple[int, ...]:
    """``t[i]`` = the smallest value >= i, or -1; one extra slot so ``t[size]`` is -1 (overflow)."""
    table = [-1] * (size + 1)
    upcoming = -1
    for i in range(size - 1, -1, -1):
        if i in values:
            upcoming = i
        table[i] = upcoming
    return tuple(table)


def _backward(values: tuple[int, ...], size: int) -> tuple[int, ...]:
    """``t[i]`` = the largest value <= i, or -1."""
    table = [-1] * size
    latest = -1
    for i in range(size):
        if i in values:
            latest = i
        table[i] = latest
    return tuple(table)


@dataclass(frozen=True, slots=True)
class CronExpr:
    """A parsed cron expression. Immutable and hashable; equal texts give equal expressions."""

    text: str
    """The expression as typed."""
    fields: tuple[str, str, str, str, str]
    """The five fields, lower-cased (a macro's expansion)."""
    macro: str | None
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    months: tuple[int, ...]
    weekdays: tuple[int, ...]
    """0 is Sunday; 7 is folded into 0."""
    dom_star: bool
    """The day-of-month field starts with '*' (Vixie's rule: then both day fields must match)."""
    dow_star: bool
    wildcard: bool
    """Minute or hour starts with '*': Debian's DST class that follows the wall clock."""

    next_minute: tuple[int, ...] = field(init=False, repr=False, compare=False)
    next_hour: tuple[int, ...] = field(init=False, repr=False, compare=False)
    next_month: tuple[int, ...] = field(init=False, repr=False, compare=False)
    prev_minute: tuple[int, ...] = field(init=False, repr=False, compare=False)
    prev_hour: tuple[int, ...] = field(init=False, repr=False, compare=False)
    prev_month: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _day_tables: dict[int, DayTables] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        setter = object.__setattr__
        setter(self, "next_minute", _forward(self.minutes, 60))
        setter(self, "next_hour", _forward(self.hours, 24))
        setter(self, "next_month", _forward(self.months, 13))
        setter(self, "prev_minute", _backward(self.minutes, 60))
        setter(self, "prev_hour", _backward(self.hours, 24))
        setter(self, "prev_month", _backward(self.months, 13))
        setter(self, "_day_tables", {})

    @property
    def dom_dow_or(self) -> bool:
        """Both day fields are restricted, so a match on either fires (Vixie)."""
        return not (self.dom_star or self.dow_star)

    def __str__(self) -> str:
        return self.text

    def day_tables(self, year: int, month: int) -> DayTables:
        """A month's (next, prev) matching-day tables indexed by day 0..32 (0 = none), and its
        matching days in order."""
        length = 29 if month == 2 and _leap(year) else _MONTH_DAYS[month]
        first = date(year, month, 1).toordinal() % 7  # 0 is Sunday, as in cron
        # A month's matching days depend only on its length and the weekday of its 1st.
        key = length * 8 + first
        tables = self._day_tables.get(key)
        if tables is None:
            tables = self._build_day_tables(length, first)
            self._day_tables[key] = tables
        return tables

    def _build_day_tables(self, length: int, first: int) -> DayTables:
        days, weekdays = set(self.days), set(self.weekdays)
        either = self.dom_dow_or
        matching = set()
        for day in range(1, length + 1):
            in_dom, in_dow = day in days, (first + day - 1) % 7 in weekdays
            if (in_dom or in_dow) if either else (in_dom and in_dow):
                matching.add(day)
        forward = [0] * 34
        upcoming = 0
        for day in range(32, 0, -1):
            if day in matching:
                upcoming = day
            forward[day] = upcoming
        backward = [0] * 33
        latest = 0
        for day in range(1, 33):
            if day in matching:
                latest = day
            backward[day] = latest
        return tuple(forward), tuple(backward), tuple(sorted(matching))


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
