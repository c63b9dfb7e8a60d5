"""Instants formatted for people, one convention everywhere (pure: zones are handed in).

Every time shown to a person is in the OS's local zone; where a schedule's own zone keeps a
different clock, its time there follows in brackets: ``Tue 14:00 (09:00 New York)``. Machines get
ISO 8601 with the offset instead (``--json``, the socket).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
"""English weekday abbreviations; the UI passes its translated ones (``strftime('%a')`` would
follow the C locale, not the app's language)."""

DST_MARK = "← DST change this day"


def format_moment(
    moment: datetime, *, year: bool = False, weekdays: Sequence[str] = WEEKDAYS
) -> str:
    """``Mon 03-11 09:00`` (``Mon 2024-03-11 09:00`` with ``year``) in ``moment``'s own zone;
    seconds only when there are some."""
    clock = "%H:%M:%S" if moment.second else "%H:%M"
    date = "%Y-%m-%d" if year else "%m-%d"
    return f"{weekdays[moment.weekday()]} {moment.strftime(f'{date} {clock}')}"


def short(moment: datetime, *, weekdays: Sequence[str] = WEEKDAYS) -> str:
    """``Tue 09:00``: for a menu, where the date is at most a week away."""
    return f"{weekdays[moment.weekday()]} {moment:%H:%M}"


def zone_label(name: str) -> str:
    """``America/New_York`` -> ``New York``: the city people know their zone by."""
    return name.rsplit("/", 1)[-1].replace("_", " ")


def for_person(
    moment: datetime,
    local: tzinfo,
    *,
    schedule_zone: tzinfo | None = None,
    schedule_zone_name: str | None = None,
    year: bool = False,
    brief: bool = False,
    weekdays: Sequence[str] = WEEKDAYS,
) -> str:
    """``moment`` on the local clock, with the schedule's clock beside it when that differs.

    ``brief`` gives a menu's ``Tue 14:00``; otherwise the date too. The bracket shows only the
    schedule's time of day (the day is obvious from the local one, and rarely differs).
    """
    here = moment.astimezone(local)
    text = (
        short(here, weekdays=weekdays)
        if brief
        else format_moment(here.replace(second=0, microsecond=0), year=year, weekdays=weekdays)
    )
    if schedule_zone is None:
        return text
    there = moment.astimezone(schedule_zone)
    if there.utcoffset() == here.utcoffset():
        return text
    label = zone_label(schedule_zone_name) if schedule_zone_name else there.tzname() or ""
    day = "" if there.date() == here.date() else f"{weekdays[there.weekday()]} "
    return f"{text} ({day}{there:%H:%M} {label})".replace(" )", ")")


def with_offset(moment: datetime) -> str:
    """``Sun 2024-03-10 03:00 -04:00 EDT``, marked when the day has a DST transition."""
    offset = moment.strftime("%z")
    text = f"{moment:%a %Y-%m-%d %H:%M} {offset[:3]}:{offset[3:]} {moment.tzname() or ''}".rstrip()
    return text + (f"  {DST_MARK}" if transition_day(moment) else "")


def transition_day(moment: datetime) -> bool:
    """True when the UTC offset of the local day of ``moment`` changes during that day."""
    zone = moment.tzinfo
    start = datetime(moment.year, moment.month, moment.day, tzinfo=zone)
    return start.utcoffset() != (start + timedelta(days=1)).utcoffset()
