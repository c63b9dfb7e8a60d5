"""Every visible string goes through ``tr``; English is the key, other languages are catalogs.

Each UI module registers its own catalog (``register("zh", {...})``) next to the strings it uses,
so a window and its translations change together. ``missing()`` lists keys looked up in a
language that has no translation for them (tests fail on it).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from domi_desktop import timefmt
from domi_desktop.api.settings import LANGUAGES

_catalogs: dict[str, dict[str, str]] = {"zh": {}}
_language = "en"
_missing: set[tuple[str, str]] = set()


def register(language: str, catalog: Mapping[str, str]) -> None:
    _catalogs.setdefault(language, {}).update(catalog)


def set_language(language: str) -> None:
    global _language
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; supported: {', '.join(LANGUAGES)}")
    _language = language


def language() -> str:
    return _language


def cron_language() -> str:
    """The language code ``domi_desktop.cron.describe`` takes."""
    return "zh" if _language == "zh" else "en"


def tr(text: str, /, **values: Any) -> str:
    """``text`` in the current language, with ``{name}`` fields filled from ``values``."""
    if _language != "en":
        translated = _catalogs.get(_language, {}).get(text)
        if translated is None:
            _missing.add((_language, text))
        else:
            text = translated
    return text.format(**values) if values else text


def missing() -> set[tuple[str, str]]:
    return set(_missing)


def reset_missing() -> None:
    _missing.clear()


register(
    "zh",
    {
        "Mon": "周一",
        "Tue": "周二",
        "Wed": "周三",
        "Thu": "周四",
        "Fri": "周五",
        "Sat": "周六",
        "Sun": "周日",
    },
)


def weekdays() -> tuple[str, ...]:
    return tuple(tr(day) for day in timefmt.WEEKDAYS)


def format_moment(moment: datetime, *, year: bool = False) -> str:
    """``timefmt.format_moment`` with the weekday in the app's language."""
    return timefmt.format_moment(moment, year=year, weekdays=weekdays())


def person_time(moment: datetime, tz: str) -> str:
    """``Tue 14:00 (09:00 New York)``: a menu's time on the local clock, the schedule's beside it."""
    from domi_desktop.cron import local_zone, zone_for
    from domi_desktop.errors import DomiError

    try:
        zone = zone_for(tz)
    except DomiError:
        zone = None
    return timefmt.for_person(
        moment,
        local_zone(),
        schedule_zone=zone,
        schedule_zone_name=tz,
        brief=True,
        weekdays=weekdays(),
    )
