from __future__ import annotations

import calendar
import random
import re
from collections.abc import Callable

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from domi_desktop.cron import CronError, CronExpr, describe, parse

# (expression, English, Chinese); between them they take every branch of the describer.
EXAMPLES = [
    ("0 9 * * 1-5", "At 09:00, Monday through Friday", "周一至周五 09:00"),
    ("* * * * *", "Every minute", "每分钟"),
    ("*/5 * * * *", "Every 5 minutes", "每 5 分钟"),
    ("0 * * * *", "Every hour, at minute 0", "每小时第 0 分钟"),
    ("@hourly", "Every hour, at minute 0", "每小时第 0 分钟"),
    ("30 2 * * *", "At 02:30, every day", "每天 02:30"),
    ("0 0 29 2 *", "At 00:00, on day 29 of February", "2 月 29 日 00:00"),
    ("0 0 13 * 5", "At 00:00, on day 13 of the month or on Friday", "每月 13 日或周五 00:00"),
    (
        "0 0 */10 * 1",
        "At 00:00, on days 1, 11, 21 and 31 of the month if it is a Monday",
        "每月 1、11、21 和 31 日（且为周一）00:00",
    ),
    (
        "15,45 9-17 * * mon-fri",
        "Every 30 minutes from 09:15 to 17:45, Monday through Friday",
        "周一至周五 09:15 至 17:45 每 30 分钟",
    ),
    ("0 9,18 * * *", "At 09:00 and 18:00, every day", "每天 09:00 和 18:00"),
    ("0 0 1 1 *", "At 00:00, on day 1 of January", "1 月 1 日 00:00"),
    ("@yearly", "At 00:00, on day 1 of January", "1 月 1 日 00:00"),
    ("@monthly", "At 00:00, on day 1 of the month", "每月 1 日 00:00"),
    ("@weekly", "At 00:00, on Sunday", "周日 00:00"),
    ("@daily", "At 00:00, every day", "每天 00:00"),
    ("0 0 * * 0", "At 00:00, on Sunday", "周日 00:00"),
    ("0 0 * 1-3 *", "At 00:00, every day in January through March", "1 至 3 月每天 00:00"),
    (
        "0 0 * 1,4,7,10 *",
        "At 00:00, every day in January, April, July and October",
        "1、4、7 和 10 月每天 00:00",
    ),
    (
        "0 0 1 */3 *",
        "At 00:00, on day 1 of January, April, July and October",
        "1、4、7 和 10 月的 1 日 00:00",
    ),
    (
        "0 0 1-5,10-12 * *",
        "At 00:00, on days 1 through 5 and 10 through 12 of the month",
        "每月 1 至 5 和 10 至 12 日 00:00",
    ),
    (
        "0,30 9,18 * * *",
        "At 09:00, 09:30, 18:00 and 18:30, every day",
        "每天 09:00、09:30、18:00 和 18:30",
    ),
    ("*/7 * * * *", "Every hour, at minutes 0, 7, 14, …, 56", "每小时第 0、7、14、…、56 分钟"),
    ("5/15 * * * *", "Every hour, at minutes 5, 20, 35 and 50", "每小时第 5、20、35 和 50 分钟"),
    ("*/45 * * * *", "Every hour, at minutes 0 and 45", "每小时第 0 和 45 分钟"),
    (
        "0-29 * * * 6",
        "Every hour, at minutes 0 through 29, on Saturday",
        "周六每小时第 0 至 29 分钟",
    ),
    (
        "*/15 9-17 * * *",
        "Every 15 minutes from 09:00 to 17:45, every day",
        "每天 09:00 至 17:45 每 15 分钟",
    ),
    ("0 9-17 * * *", "Every hour from 09:00 to 17:00, every day", "每天 09:00 至 17:00 每小时"),
    ("* 9 * * *", "Every minute from 09:00 to 09:59, every day", "每天 09:00 至 09:59 每分钟"),
    ("0-30 9 * * *", "Every minute from 09:00 to 09:30, every day", "每天 09:00 至 09:30 每分钟"),
    (
        "0 */2 * * *",
        "Every 2 hours from 00:00 to 22:00, every day",
        "每天 00:00 至 22:00 每 2 小时",
    ),
    (
        "30 1-23/2 * * *",
        "Every 2 hours from 01:30 to 23:30, every day",
        "每天 01:30 至 23:30 每 2 小时",
    ),
    (
        "0,20,40,45-59 9 * * *",
        "At 09:00, 09:20, 09:40 and 09:45 through 09:59, every day",
        "每天 09:00、09:20、09:40 和 09:45 至 09:59",
    ),
    (
        "0,20 9-17 * * *",
        "At minutes 0 and 20 past every hour from 09:00 to 17:00, every day",
        "每天 9 至 17 点的第 0 和 20 分钟",
    ),
    (
        "0,20 9-11,14-16 * * *",
        "At minutes 0 and 20 past hours 9 through 11 and 14 through 16, every day",
        "每天 9 至 11 和 14 至 16 点的第 0 和 20 分钟",
    ),
    (
        "*/5 9-11,14-16 * * *",
        "Every 5 minutes during hours 9 through 11 and 14 through 16, every day",
        "每天 9 至 11 和 14 至 16 点的每 5 分钟",
    ),
    (
        "*/7 */2 * * *",
        "At minutes 0, 7, 14, …, 56 past hours 0, 2, 4, …, 22, every day",
        "每天 0、2、4、…、22 点的第 0、7、14、…、56 分钟",
    ),
    (
        "0 0 */2 * 1-5",
        "At 00:00, on days 1, 3, 5, …, 31 of the month if it is Monday through Friday",
        "每月 1、3、5、…、31 日（且为周一至周五）00:00",
    ),
    (
        "0 0 13 * */2",
        "At 00:00, on day 13 of the month if it is a Tuesday, Thursday, Saturday or Sunday",
        "每月 13 日（且为周二、周四、周六或周日）00:00",
    ),
    (
        "0 0 1,15 * 1,3,5",
        "At 00:00, on days 1 and 15 of the month or on Monday, Wednesday or Friday",
        "每月 1 和 15 日或周一、周三或周五 00:00",
    ),
    (
        "0 0 13 2 5",
        "At 00:00, on day 13 of the month or on Friday, in February",
        "2 月的 13 日或周五 00:00",
    ),
    (
        "0 0 */10 jan 1",
        "At 00:00, on days 1, 11, 21 and 31 of the month if it is a Monday, in January",
        "1 月的 1、11、21 和 31 日（且为周一）00:00",
    ),
    ("0 12 * 2 1-5", "At 12:00, Monday through Friday, in February", "2 月的周一至周五 12:00"),
    ("0 0 * * sat,sun", "At 00:00, on Saturday and Sunday", "周六和周日 00:00"),
    ("0 0 * * fri-sun", "At 00:00, Friday through Sunday", "周五至周日 00:00"),
    ("0 0 * * 1-3,5", "At 00:00, on Monday through Wednesday and Friday", "周一至周三和周五 00:00"),
    ("* * * 1 *", "Every minute, in January", "1 月每分钟"),
    ("0 * * 1-6 *", "Every hour, at minute 0, in January through June", "1 至 6 月每小时第 0 分钟"),
    # Vixie's OR: an unrestricted day field (even spelled 1-31 or 0-6) lets every day fire.
    ("0 0 1-31 * 1", "At 00:00, every day", "每天 00:00"),
    ("0 0 13 * 0-6", "At 00:00, every day", "每天 00:00"),
    ("0 0 * * mon-sun", "At 00:00, every day", "每天 00:00"),
]


@pytest.mark.parametrize(("text", "english", "chinese"), EXAMPLES)
def test_examples(text: str, english: str, chinese: str) -> None:
    assert describe(text) == english
    assert describe(text, "en") == english
    assert describe(text, lang="zh") == chinese


def test_it_accepts_a_parsed_expression() -> None:
    expr = parse("0 9 * * 1-5")
    assert isinstance(expr, CronExpr)
    assert describe(expr, "zh") == "周一至周五 09:00"


def test_an_unknown_language_is_a_value_error_naming_the_supported_ones() -> None:
    with pytest.raises(ValueError, match=r"'fr'.*en, zh"):
        describe("* * * * *", "fr")


def test_a_bad_expression_is_a_cron_error() -> None:
    with pytest.raises(CronError, match="minute: 61 is out of range"):
        describe("61 * * * *")
    with pytest.raises(CronError):
        describe(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("1-10/3 * * * *", "1,4,7,10 * * * *"),
        ("0 9 * * mon-fri", "0 9 * * 1-5"),
        ("0 9 * * 7", "0 9 * * 0"),
        ("0 9 * * sun,6", "0 9 * * 6,7"),
        ("0 0 1 1-10/3 *", "0 0 1 jan,apr,jul,oct *"),
        ("0 0 1,2,3,4,5,10,11,12 * *", "0 0 1-5,10-12 * *"),
        ("0 0 1/10 * *", "0 0 1,11,21,31 * *"),
        ("0-59/1 0-23 * * *", "* * * * *"),
        ("0 0 1 1 *", "@annually"),
    ],
)
def test_spellings_of_the_same_sets_describe_identically(one: str, other: str) -> None:
    for lang in ("en", "zh"):
        assert describe(one, lang) == describe(other, lang)


# --- Random expressions -------------------------------------------------------------------------

MONTH_NAMES = [name.lower() for name in calendar.month_abbr]  # "" first, so the index is the month
WEEKDAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
BOUNDS = [(0, 59, None), (0, 23, None), (1, 31, None), (1, 12, MONTH_NAMES), (0, 7, WEEKDAY_NAMES)]


@st.composite
def field_texts(draw: st.DrawFn, low: int, high: int, names: list[str] | None) -> str:
    def spell(value: int) -> str:
        if names is not None and value < len(names) and names[value] and draw(st.booleans()):
            return names[value].upper() if draw(st.booleans()) else names[value]
        return str(value)

    items = []
    for _ in range(draw(st.integers(1, 3))):
        a, b = sorted(draw(st.lists(st.integers(low, high), min_size=2, max_size=2)))
        step = draw(st.integers(1, high - low + 2))
        form = draw(st.sampled_from(["*", "*/s", "a", "a-b", "a-b/s", "a/s"]))
        items.append(
            {
                "*": "*",
                "*/s": f"*/{step}",
                "a": spell(a),
                "a-b": f"{spell(a)}-{spell(b)}",
                "a-b/s": f"{spell(a)}-{spell(b)}/{step}",
                "a/s": f"{spell(a)}/{step}",
            }[form]
        )
    return ",".join(items)


@st.composite
def expressions(draw: st.DrawFn) -> CronExpr:
    fields = [draw(field_texts(low, high, names)) for low, high, names in BOUNDS]
    try:
        return parse(" ".join(fields))
    except CronError:
        # Only a day of month that no chosen month has ("30 2") is refused; skip those.
        reject()


@given(expressions())
def test_it_never_fails_and_never_leaves_a_hole(expr: CronExpr) -> None:
    english, chinese = describe(expr, "en"), describe(expr, "zh")
    for text in (english, chinese):
        assert text
        assert text == text.strip()
        assert "  " not in text
        assert not re.search(r"[{}%]|None|\b(?:and|or|through) ,", text)
    assert english[0].isupper()
    assert english.startswith(("At ", "Every "))
    assert not re.search(r"[A-Za-z]", chinese)


@given(expressions(), st.randoms())
def test_any_spelling_of_the_same_sets_describes_the_same(
    expr: CronExpr, rnd: random.Random
) -> None:
    def respell(index: int, values: tuple[int, ...]) -> str:
        if index in (2, 4) and expr.fields[index].startswith("*"):
            # A leading '*' on a day field is meaning, not spelling (Vixie's AND), so keep it.
            return expr.fields[index]
        names = BOUNDS[index][2]
        spelled = []
        for value in rnd.sample(values, len(values)) + rnd.sample(
            values, rnd.randint(0, min(2, len(values)))
        ):
            if index == 4 and value == 0 and rnd.random() < 0.5:
                spelled.append("7")
            elif names is not None and rnd.random() < 0.5:
                spelled.append(names[value])
            else:
                spelled.append(str(value))
        return ",".join(spelled)

    sets = (expr.minutes, expr.hours, expr.days, expr.months, expr.weekdays)
    other = parse(" ".join(respell(i, values) for i, values in enumerate(sets)))
    assert (other.minutes, other.hours, other.days, other.months, other.weekdays) == sets
    for lang in ("en", "zh"):
        assert describe(other, lang) == describe(expr, lang)


# --- Reading the English back -------------------------------------------------------------------
# An independent reader of the English sentences; comparing what it reads with the expression's
# real semantics checks that the description is never wrong, for any expression.

MONTHS = "January February March April May June July August September October November December"
EN_MONTHS = {name: i for i, name in enumerate(MONTHS.split(), start=1)}
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday"
EN_WEEKDAYS = {name: i for i, name in enumerate(WEEKDAYS.split(), start=1)}


def read_list(text: str, value: Callable[[str], int]) -> set[int]:
    parts = re.split(r", | and | or ", text)
    if "…" in parts:
        assert len(parts) == 5 and parts[3] == "…"
        first, second, third, last = (value(p) for p in (parts[0], parts[1], parts[2], parts[4]))
        assert third - second == second - first > 1
        return set(range(first, last + 1, second - first))
    values: set[int] = set()
    for part in parts:
        low, _, high = part.partition(" through ")
        values.update(range(value(low), value(high or low) + 1))
    return values


def clock(text: str) -> int:
    hour, minute = text.split(":")
    return int(hour) * 60 + int(minute)


def product(minutes: set[int], hours: set[int]) -> set[int]:
    return {h * 60 + m for h in hours for m in minutes}


def read_times(text: str) -> set[int]:
    """The fire times of a day (minutes since midnight) that an English time phrase says."""
    every = r"Every (minute|\d+ minutes|hour|\d+ hours)"
    if match := re.fullmatch(rf"{every} from (\d\d:\d\d) to (\d\d:\d\d)", text):
        count = int(match[1].split()[0]) if match[1][0].isdigit() else 1
        step = count * 60 if "hour" in match[1] else count
        return set(range(clock(match[2]), clock(match[3]) + 1, step))
    if match := re.fullmatch(r"Every (?:minute|(\d+) minutes)(?: during hours? (.+))?", text):
        hours = read_list(match[2], int) if match[2] else set(range(24))
        return product(set(range(0, 60, int(match[1] or 1))), hours)
    if match := re.fullmatch(r"Every hour, at minutes? (.+)", text):
        return product(read_list(match[1], int), set(range(24)))
    if match := re.fullmatch(r"At minutes? (.+) past every hour from (\d\d):00 to (\d\d):00", text):
        return product(read_list(match[1], int), set(range(int(match[2]), int(match[3]) + 1)))
    if match := re.fullmatch(r"At minutes? (.+) past hours? (.+)", text):
        return product(read_list(match[1], int), read_list(match[2], int))
    match = re.fullmatch(r"At (.+)", text)
    assert match, text
    return read_list(match[1], clock)


Day = Callable[[int, int, int], bool]
"""Whether a (month, day of month, weekday with Sunday 0) fires."""


def read_days(text: str) -> Day:
    """The days an English day phrase says."""

    def weekdays(part: str) -> set[int]:
        return {d % 7 for d in read_list(part, EN_WEEKDAYS.__getitem__)}

    months = set(range(1, 13))
    if match := re.fullmatch(r"(?:every day )?in (.+)", text):
        months = read_list(match[1], EN_MONTHS.__getitem__)
        text = ""
    elif match := re.fullmatch(r"(.+), in (.+)", text):
        text, months = match[1], read_list(match[2], EN_MONTHS.__getitem__)
    if text in ("", "every day"):
        return lambda month, day, weekday: month in months
    if match := re.fullmatch(r"on days? (.+) of the month (or on|if it is(?: a)?) (.+)", text):
        days, chosen = read_list(match[1], int), weekdays(match[3])
        if match[2] == "or on":
            return lambda month, day, weekday: (
                month in months and (day in days or weekday in chosen)
            )
        return lambda month, day, weekday: month in months and day in days and weekday in chosen
    if match := re.fullmatch(r"on days? (.+) of (.+)", text):
        days = read_list(match[1], int)
        if match[2] != "the month":
            months = read_list(match[2], EN_MONTHS.__getitem__)
        return lambda month, day, weekday: month in months and day in days
    chosen = weekdays(text.removeprefix("on "))
    return lambda month, day, weekday: month in months and weekday in chosen


def fires_on(expr: CronExpr) -> Day:
    """Vixie's day rule, from the expression itself."""
    days, weekdays, months = set(expr.days), set(expr.weekdays), set(expr.months)
    if expr.dom_star or expr.dow_star:
        return lambda month, day, weekday: month in months and day in days and weekday in weekdays
    return lambda month, day, weekday: month in months and (day in days or weekday in weekdays)


@given(expressions())
def test_the_english_says_exactly_when_it_fires(expr: CronExpr) -> None:
    sentence = describe(expr)
    parts = re.split(r", (?=every day|in |on |[A-Z])", sentence, maxsplit=1)
    time, day = parts[0], parts[1] if len(parts) > 1 else ""
    assert read_times(time) == product(set(expr.minutes), set(expr.hours)), sentence
    said, truth = read_days(day), fires_on(expr)
    for month in range(1, 13):
        for day_of_month in range(1, 32):
            for weekday in range(7):
                assert said(month, day_of_month, weekday) == truth(month, day_of_month, weekday), (
                    sentence,
                    month,
                    day_of_month,
                    weekday,
                )
