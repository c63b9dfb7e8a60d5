"""Healthchecks: the ``schedule`` and ``tz`` of a cron check that expects a ping exactly when domi
fires.

Healthchecks evaluates cron with cronsim, which reads Debian's dialect: Vixie's day rule (either day
field starting with ``*`` means AND, else OR) and Debian's DST classes (a job whose minute or hour
field starts with ``*`` follows the wall clock; any other runs a gap time when the gap ends and a
repeated time once). Both hang on how a field *starts*, so the fields are written again from the
parsed value sets, each starting with ``*`` exactly when domi's did, in plain numbers (no names, no
macros: cronsim's names and ``7`` differ in corners, numbers never do). What Healthchecks cannot
hold (a schedule over 100 characters, a zone without an IANA name) is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from domi_desktop.cron import CronExpr
from domi_desktop.errors import ExportError
from domi_desktop.export._fields import (
    ALL_DAYS,
    ALL_HOURS,
    ALL_MINUTES,
    ALL_MONTHS,
    ALL_WEEKDAYS,
    runs,
)

MAX_SCHEDULE = 100
"""Healthchecks keeps a check's schedule in a 100-character column and refuses a longer one."""


def healthchecks_schedule(expr: CronExpr) -> str:
    """Five fields that cronsim evaluates to domi's fire instants in any zone; ``ExportError``
    when Healthchecks cannot hold them."""
    minute, hour = (text.startswith("*") for text in expr.fields[:2])
    fields = (
        _field(expr.minutes, ALL_MINUTES, minute),
        _field(expr.hours, ALL_HOURS, hour),
        _field(expr.days, ALL_DAYS, expr.dom_star),
        _field(expr.months, ALL_MONTHS, expr.months == ALL_MONTHS),
        _field(expr.weekdays, ALL_WEEKDAYS, expr.dow_star),
    )
    schedule = " ".join(fields)
    if len(schedule) > MAX_SCHEDULE:
        raise ExportError(
            f"Healthchecks takes schedules of at most {MAX_SCHEDULE} characters; "
            f"{expr.text!r} needs {len(schedule)} there ({schedule})"
        )
    return schedule


def _field(values: Sequence[int], full: Sequence[int], star: bool) -> str:
    if tuple(values) == tuple(full):
        return "*" if star else f"{full[0]}-{full[-1]}"
    if not star:
        return _list(values)
    # A field domi read as starting with '*' holds the field's first value (as '*' and '*/S'
    # do), which a '*'-led list can always name.
    step = _progression(values)
    if step is not None and values[-1] + step > full[-1]:
        return f"*/{step}"  # from the first value to the end of the field
    # A step past the field's end selects its first value alone (cronsim and Debian), so the
    # field starts with '*' and still means exactly ``values``.
    rest = _list(values[1:])
    return f"*/{len(full)}" + (f",{rest}" if rest else "")


def _progression(values: Sequence[int]) -> int | None:
    if len(values) < 2:
        return None
    step = values[1] - values[0]
    if all(b - a == step for a, b in pairwise(values)):
        return step
    return None


def _list(values: Sequence[int]) -> str:
    step = _progression(values)
    if step is not None and step > 1 and len(values) > 2:
        return f"{values[0]}-{values[-1]}/{step}"
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs(values))
