from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domi_desktop.cron import CronError, CronExpr, parse
from tests.support.wine import embedded_python_cannot


def error_of(text: str) -> CronError:
    with pytest.raises(CronError) as caught:
        parse(text)
    return caught.value


def test_it_parses_the_five_fields_into_value_sets() -> None:
    expr = parse("0 9 * * 1-5")
    assert expr.minutes == (0,)
    assert expr.hours == (9,)
    assert expr.days == tuple(range(1, 32))
    assert expr.months == tuple(range(1, 13))
    assert expr.weekdays == (1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    ("text", "field", "values"),
    [
        ("*/15 * * * *", "minutes", (0, 15, 30, 45)),
        ("10-20/5 * * * *", "minutes", (10, 15, 20)),
        ("50/4 * * * *", "minutes", (50, 54, 58)),
        ("0 5-5 * * *", "hours", (5,)),
        ("0 0 1,15,31 * *", "days", (1, 15, 31)),
        ("0 0 * jan,JUL,Dec *", "months", (1, 7, 12)),
        ("0 0 * mar-may *", "months", (3, 4, 5)),
        ("0 0 * * mon-fri", "weekdays", (1, 2, 3, 4, 5)),
        ("0 0 * * mon-sun", "weekdays", (0, 1, 2, 3, 4, 5, 6)),
        ("0 0 * * 7", "weekdays", (0,)),
        ("0 0 * * 5-7", "weekdays", (0, 5, 6)),
        ("0 0 * * SAT,sun", "weekdays", (0, 6)),
        ("0 0 * * sat-sun", "weekdays", (0, 6)),
        ("0 0 * * */2", "weekdays", (0, 2, 4, 6)),
        ("0 0 * * 1/2", "weekdays", (0, 1, 3, 5)),
        ("*/90 * * * *", "minutes", (0,)),
        ("0 */25 * * *", "hours", (0,)),
    ],
)
def test_it_accepts_every_element_form(text: str, field: str, values: tuple[int, ...]) -> None:
    assert getattr(parse(text), field) == values


@pytest.mark.parametrize(
    ("macro", "same_as"),
    [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        ("@DAILY", "0 0 * * *"),
    ],
)
def test_macros_mean_what_vixie_cron_means(macro: str, same_as: str) -> None:
    expr, plain = parse(macro), parse(same_as)
    assert expr.macro == macro.lower()
    assert (expr.minutes, expr.hours, expr.days, expr.months, expr.weekdays) == (
        plain.minutes,
        plain.hours,
        plain.days,
        plain.months,
        plain.weekdays,
    )
    assert expr.wildcard == plain.wildcard


def test_hourly_is_a_wildcard_job_and_daily_a_fixed_time_one() -> None:
    assert parse("@hourly").wildcard
    assert not parse("@daily").wildcard
    assert parse("*/5 3 * * *").wildcard
    assert parse("0 */2 * * *").wildcard
    assert not parse("0 1-5 * * *").wildcard


def test_leading_and_trailing_blanks_and_tabs_are_ignored() -> None:
    assert parse(" \t0\t9  * * 1-5 \t").hours == (9,)


@pytest.mark.parametrize("field", ["sun-sun", "0-sun", "sun-7", "7-sun", "SUN-Sun", "sun-sun/2"])
def test_a_name_range_from_a_day_to_the_same_day_is_that_day_only(field: str) -> None:
    assert parse(f"0 9 * * {field}").weekdays == parse("0 9 * * 0-0").weekdays == (0,)


def test_a_range_ending_on_sunday_still_runs_through_the_week() -> None:
    assert parse("0 9 * * mon-sun").weekdays == (0, 1, 2, 3, 4, 5, 6)
    assert parse("0 9 * * sat-sun").weekdays == (0, 6)
    assert parse("0 9 * * 0-7").weekdays == (0, 1, 2, 3, 4, 5, 6)


def test_the_day_fields_star_flags_follow_the_first_character() -> None:
    assert parse("0 0 */2 * 1").dom_star
    assert not parse("0 0 */2 * 1").dow_star
    assert parse("0 0 13 * 5").dom_dow_or
    assert not parse("0 0 13 * *").dom_dow_or


def test_expressions_are_immutable_hashable_and_cached() -> None:
    first, again = parse("0 9 * * 1-5"), parse("0 9 * * 1-5")
    assert first is again
    assert hash(first) == hash(CronExpr(**_init_fields(first)))
    assert {first: 1}[CronExpr(**_init_fields(first))] == 1
    with pytest.raises(AttributeError):
        first.minutes = (1,)  # type: ignore[misc]


def _init_fields(expr: CronExpr) -> dict[str, object]:
    names = "text fields macro minutes hours days months weekdays dom_star dow_star wildcard"
    return {name: getattr(expr, name) for name in names.split()}


@pytest.mark.parametrize(
    ("text", "field", "span", "message"),
    [
        ("61 * * * *", "minute", (0, 2), "minute: 61 is out of range 0-59"),
        ("0 24 * * *", "hour", (2, 4), "hour: 24 is out of range 0-23"),
        ("0 0 0 * *", "day-of-month", (4, 5), "day-of-month: 0 is out of range 1-31"),
        ("0 0 * 13 *", "month", (6, 8), "month: 13 is out of range 1-12"),
        ("0 0 * * 8", "day-of-week", (8, 9), "day-of-week: 8 is out of range 0-7"),
        ("5-2 * * * *", "minute", (0, 3), "minute: range 5-2 is reversed (5 > 2)"),
        ("*/0 * * * *", "minute", (2, 3), "minute: step 0 is not allowed"),
        ("1,,2 * * * *", "minute", (2, 3), "minute: empty list item"),
        ("1, * * * *", "minute", (2, 3), "minute: empty list item"),
        ("0 0 L * *", "day-of-month", (4, 5), "'L' (last day) is not supported"),
        ("0 0 15W * *", "day-of-month", (6, 7), "'W' (nearest weekday) is not supported"),
        ("0 0 * * 5#3", "day-of-week", (9, 10), "'#' (nth weekday of the month)"),
        ("0 0 ? * *", "day-of-month", (4, 5), "'?' is not supported"),
        ("H * * * *", "minute", (0, 1), "'H' (hashed value) is not supported"),
        ("H/15 * * * *", "minute", (0, 1), "'H' (hashed value) is not supported"),
        ("0 0 LW * *", "day-of-month", (4, 5), "'L' (last day) is not supported"),
        ("0 0 * * 5L", "day-of-week", (9, 10), "'L' (last day) is not supported"),
        ("Hello * * * *", "minute", (0, 5), "minute: 'Hello' is not a number"),
        ("This cron job will play", "minute", (0, 4), "minute: 'This' is not a number"),
        ("0 0 * * Wednesday", "day-of-week", (8, 17), "unknown name 'Wednesday'"),
        ("0 0 * * what?", "day-of-week", (8, 13), "unknown name 'what?'"),
        ("0 0 * foo *", "month", (6, 9), "month: unknown name 'foo'"),
        ("0 0 * * fri-mon", "day-of-week", (8, 15), "range fri-mon is reversed (5 > 1)"),
        ("x * * * *", "minute", (0, 1), "minute: 'x' is not a number"),
        ("*/ * * * *", "minute", (2, 2), "minute: missing step"),
        ("1-/2 * * * *", "minute", (2, 2), "minute: missing value"),
    ],
)
def test_bad_fields_name_the_field_the_span_and_the_reason(
    text: str, field: str, span: tuple[int, int], message: str
) -> None:
    error = error_of(text)
    assert error.field == field
    assert error.span == span
    assert message in str(error)
    assert error.text == text


def test_a_span_counts_from_the_text_as_typed_including_leading_blanks() -> None:
    error = error_of("   0  99 * * *")
    assert error.span == (6, 8)
    assert "   0  99 * * *"[slice(*error.span)] == "99"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0 0 9 * * *", "expected 5 fields"),
        ("0 0 9 * * * 2024", "seconds and years are not supported"),
        ("0 9 * *", "got 4"),
        ("", "empty"),
        ("   ", "empty"),
        ("@reboot", "@reboot is not supported"),
        ("@sometimes", "unknown macro @sometimes"),
        ("@daily 5", "nothing may follow the macro"),
        ("x" * 1001, "too long"),
    ],
)
def test_whole_expression_errors_have_no_field(text: str, message: str) -> None:
    error = error_of(text)
    assert error.field is None
    assert message in str(error)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0 0 30 2 *", "February never has day 30"),
        ("0 0 31 4 *", "April never has day 31"),
        ("0 0 31 4,6,9,11 *", "none of April, June, September, November ever has day 31"),
        ("0 0 30,31 feb *", "February never has day 30 or 31"),
        ("0 0 31 4 */7", "April never has day 31"),
    ],
)
def test_expressions_that_can_never_fire_are_rejected_with_the_reason(
    text: str, reason: str
) -> None:
    error = error_of(text)
    assert error.field == "day-of-month"
    assert reason in str(error)


@pytest.mark.parametrize(
    "text",
    ["0 0 29 2 *", "0 0 31 * *", "0 0 30 2 1", "0 0 29 2 */7", "0 0 31 4,5 *"],
)
def test_rare_but_possible_expressions_are_accepted(text: str) -> None:
    parse(text)


def test_30_february_or_a_monday_is_possible_under_the_or_rule() -> None:
    assert parse("0 0 30 2 1").dom_dow_or


@pytest.mark.parametrize(
    "text",
    [
        "١ * * * *",  # Arabic-Indic digit one
        "² * * * *",  # superscript two: str.isdigit() says yes
        "0 0 * * \x00",
        "\x00",
        "0\x000 * * * *",
        ",".join(["1"] * 3000),
        "1," * 5000 + " * * * *",
        "9" * 5000 + " * * * *",
        "*/" + "9" * 5000 + " * * * *",
        "0 0 * * mon-" + "z" * 300,
        "0 0 * * 💥",
        "\n0 0 * * *",
        "0 0 * * *\n",
    ],
)
def test_hostile_strings_raise_cron_error_and_nothing_else(text: str) -> None:
    try:
        parse(text)
    except CronError as error:
        start, end = error.span
        assert 0 <= start <= end <= max(len(text), 1)
        assert str(error)


def test_non_text_is_a_cron_error_too() -> None:
    with pytest.raises(CronError):
        parse(b"0 0 * * *")  # type: ignore[arg-type]


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_any_string_parses_or_raises_cron_error(text: str) -> None:
    try:
        parse(text)
    except CronError as error:
        start, end = error.span
        assert 0 <= start <= end <= len(text) + 1


CRON_ALPHABET = "0123456789*/-, \tLW#?Hjanmonfrisu@"


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=CRON_ALPHABET, max_size=40))
def test_cron_like_strings_parse_or_raise_cron_error(text: str) -> None:
    try:
        expr = parse(text)
    except CronError:
        return
    assert expr.minutes and expr.hours and expr.days and expr.months and expr.weekdays


@embedded_python_cannot("its python311._pth puts the site folder on sys.path, even under -I -S")
def test_the_cron_engine_imports_in_an_interpreter_without_site_packages() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r});"
        "from domi_desktop.cron import parse, next_run, prev_run, describe, CronError;"
        "import importlib.util as u;"
        "assert u.find_spec('PySide6') is None and u.find_spec('peewee') is None;"
        "print(parse('0 9 * * 1-5').hours)"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "(9,)"
