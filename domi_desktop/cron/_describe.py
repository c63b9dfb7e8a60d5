"""A short human sentence for a cron expression, in English or Simplified Chinese.

Everything is described from the resolved value sets, never from the field text, so that every
spelling of the same schedule (``1-10/3`` and ``1,4,7,10``, ``mon-fri`` and ``1-5``) reads the same.
The one exception is the day rule: whether a day field starts with ``*`` decides between Vixie's
AND and OR, so that is read from the expression's flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from domi_desktop.cron._expr import CronExpr
from domi_desktop.cron._parse import parse

LANGUAGES = ("en", "zh")

MAX_LISTED_TIMES = 6
"""Up to this many fire times a day are listed one by one ("At 09:00, 09:30, 18:00 and 18:30")."""

MAX_LISTED_STEPS = 6
"""An arithmetic sequence longer than this is shortened to "1, 3, 5, …, 31"."""

MIN_RANGE = 3
"""Shorter runs of consecutive values are listed: "1 and 2" reads better than "1 through 2"."""

MONTHS_EN = (
    "",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS_EN = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
WEEKDAYS_ZH = ("周日", "周一", "周二", "周三", "周四", "周五", "周六")

AND = {"en": "and", "zh": "和"}
OR = {"en": "or", "zh": "或"}


def describe(expr: CronExpr | str, lang: str = "en") -> str:
    """A short sentence saying when ``expr`` fires; a string is parsed first (``CronError``)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; supported: {', '.join(LANGUAGES)}")
    if not isinstance(expr, CronExpr):
        expr = parse(expr)
    time, whole_day = _time_phrase(expr, lang)
    day = _day_phrase(expr, lang, whole_day)
    if lang == "en":
        return f"{time}, {day}" if day else time
    return _cjk(day, time)


def _time_phrase(expr: CronExpr, lang: str) -> tuple[str, bool]:
    """The time-of-day part, and whether it already says "all day long" (so no "every day")."""
    en = lang == "en"
    minutes, hours = expr.minutes, expr.hours
    if len(minutes) * len(hours) <= MAX_LISTED_TIMES:
        listed = _join([_hhmm(h, m) for h in hours for m in minutes], lang, AND)
        return (f"At {listed}" if en else listed), False

    minute_step = _uniform_minute_step(minutes)
    if len(hours) == 24:
        if minute_step:
            return _every_minutes(minute_step, lang), True
        listed = _render(minutes, str, lang, AND)
        if en:
            return f"Every hour, at {_plural('minute', minutes)} {listed}", True
        return _cjk("每小时第", listed, "分钟"), True

    # Fire times of a day, in minutes since midnight; sorted because both factors are.
    times = [h * 60 + m for h in hours for m in minutes]
    step = _step(times)
    if step:
        first, last = _hhmm(*divmod(times[0], 60)), _hhmm(*divmod(times[-1], 60))
        every = _every_hours(step // 60, lang) if step % 60 == 0 else _every_minutes(step, lang)
        if en:
            return f"{every} from {first} to {last}", False
        return _cjk(first, "至", last, every), False

    if len(hours) == 1:
        hour = hours[0]
        listed = _render(minutes, lambda m: _hhmm(hour, m), lang, AND)
        return (f"At {listed}" if en else listed), False

    hour_list = _render(hours, str, lang, AND)
    if minute_step:
        every = _every_minutes(minute_step, lang)
        if en:
            return f"{every} during {_plural('hour', hours)} {hour_list}", False
        return _cjk(hour_list, "点的", every), False
    minute_list = _render(minutes, str, lang, AND)
    if not en:
        return _cjk(hour_list, "点的第", minute_list, "分钟"), False
    if len(_runs(hours)) == 1:
        span = f"every hour from {_hhmm(hours[0], 0)} to {_hhmm(hours[-1], 0)}"
    else:
        span = f"{_plural('hour', hours)} {hour_list}"
    return f"At {_plural('minute', minutes)} {minute_list} past {span}", False


def _day_phrase(expr: CronExpr, lang: str, whole_day: bool) -> str:
    """The days and months part; empty when the schedule fires all day long every day."""
    en = lang == "en"
    all_days, all_weekdays = len(expr.days) == 31, len(expr.weekdays) == 7
    if expr.dom_dow_or:
        # Vixie's OR: one unrestricted day field lets every day fire, whatever the other says.
        by_day = by_weekday = not (all_days or all_weekdays)
    else:
        by_day, by_weekday = not all_days, not all_weekdays
    months = _render(expr.months, MONTHS_EN.__getitem__ if en else str, lang, AND)
    some_months = len(expr.months) < 12
    # Monday first, as both languages' calendars do, so that sat,sun reads "Saturday and Sunday".
    weekdays = sorted(d or 7 for d in expr.weekdays)
    names = WEEKDAYS_EN if en else WEEKDAYS_ZH
    runs = _runs(weekdays)
    ranged = any(last - first + 1 >= MIN_RANGE for first, last in runs)

    def weekday_list(conjunction: dict[str, str]) -> str:
        return _render(weekdays, lambda d: names[d % 7], lang, conjunction)

    days = _render(expr.days, str, lang, AND)
    if en:
        in_months = f", in {months}" if some_months else ""
        on_days = f"on {_plural('day', expr.days)} {days} of"
        if by_day and by_weekday:
            choice = weekday_list(OR)
            if expr.dom_dow_or:
                return f"{on_days} the month or on {choice}{in_months}"
            # A plain list takes an article ("if it is a Monday"); a range does not.
            article = "" if ranged else "a "
            return f"{on_days} the month if it is {article}{choice}{in_months}"
        if by_day:
            return f"{on_days} {months if some_months else 'the month'}"
        if by_weekday:
            # "Monday through Friday" stands alone; anything else needs "on".
            listed = weekday_list(AND)
            if not (ranged and len(runs) == 1):
                listed = f"on {listed}"
            return f"{listed}{in_months}"
        if not some_months:
            return "" if whole_day else "every day"
        return f"in {months}" if whole_day else f"every day in {months}"

    scope = _cjk(months, "月的") if some_months else "每月"
    if by_day and by_weekday:
        if expr.dom_dow_or:
            return _cjk(scope, days, "日或", weekday_list(OR))
        return _cjk(scope, days, "日（且为", weekday_list(OR), "）")
    if by_day:
        if len(expr.months) == 1:
            return _cjk(months, "月", days, "日")
        return _cjk(scope, days, "日")
    if by_weekday:
        return _cjk(scope if some_months else "", weekday_list(AND))
    return _cjk(_cjk(months, "月") if some_months else "", "" if whole_day else "每天")


def _every_minutes(step: int, lang: str) -> str:
    if lang == "en":
        return "Every minute" if step == 1 else f"Every {step} minutes"
    return "每分钟" if step == 1 else _cjk("每", str(step), "分钟")


def _every_hours(count: int, lang: str) -> str:
    if lang == "en":
        return "Every hour" if count == 1 else f"Every {count} hours"
    return "每小时" if count == 1 else _cjk("每", str(count), "小时")


def _uniform_minute_step(minutes: Sequence[int]) -> int:
    """S when the minutes are exactly ``*/S`` with S dividing 60 (truly every S minutes), else 0."""
    step = _step(minutes)
    if step and 60 % step == 0 and tuple(minutes) == tuple(range(0, 60, step)):
        return step
    return 0


def _step(values: Sequence[int]) -> int:
    """The common difference of an arithmetic sequence of at least two values, else 0."""
    if len(values) < 2:
        return 0
    step = values[1] - values[0]
    if all(b - a == step for a, b in pairwise(values)):
        return step
    return 0


def _runs(values: Sequence[int]) -> list[tuple[int, int]]:
    """Runs of consecutive values in a sorted sequence, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and runs[-1][1] == value - 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


def _render(
    values: Sequence[int], name: Callable[[int], str], lang: str, conjunction: dict[str, str]
) -> str:
    """A sorted value set as compact text: ranges for runs, an ellipsis for long steps."""
    separator = ", " if lang == "en" else "、"
    step = _step(values)
    if step > 1 and len(values) > MAX_LISTED_STEPS:
        return separator.join([*(name(v) for v in values[:3]), "…", name(values[-1])])
    items: list[str] = []
    for first, last in _runs(values):
        if last - first + 1 >= MIN_RANGE:
            if lang == "en":
                items.append(f"{name(first)} through {name(last)}")
            else:
                items.append(_cjk(name(first), "至", name(last)))
        else:
            items.extend(name(v) for v in range(first, last + 1))
    return _join(items, lang, conjunction)


def _join(items: Sequence[str], lang: str, conjunction: dict[str, str]) -> str:
    """Items as "a, b and c" / "a、b 和 c"."""
    if len(items) == 1:
        return items[0]
    if lang == "en":
        return f"{', '.join(items[:-1])} {conjunction['en']} {items[-1]}"
    return _cjk("、".join(items[:-1]), conjunction["zh"], items[-1])


def _hhmm(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _plural(word: str, values: Sequence[int]) -> str:
    return word if len(values) == 1 else word + "s"


def _cjk(*parts: str) -> str:
    """Concatenate Chinese text with a space between a Han character and a digit or Latin letter.

    That is the usual typesetting of mixed text ("每 5 分钟", "2 月 29 日 00:00"); punctuation
    such as "、" or "）" takes no space.
    """
    text = ""
    for part in parts:
        if not part:
            continue
        if text and (
            (_is_latin(text[-1]) and _is_han(part[0])) or (_is_han(text[-1]) and _is_latin(part[0]))
        ):
            text += " "
        text += part
    return text


def _is_latin(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _is_han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"
