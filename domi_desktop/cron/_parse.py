"""Parsing Vixie/Debian cron's five-field dialect into a ``CronExpr``, with errors that point at the text."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from functools import lru_cache

from domi_desktop.cron._expr import CronExpr
from domi_desktop.errors import CronError

MAX_LENGTH = 1000
"""Longer input is refused before any work: no real schedule is this long, and it bounds parse time."""

BLANKS = " \t"
DIGITS = frozenset("0123456789")

MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
WEEKDAY_NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

# Vixie cron's macros; @reboot has no meaning for a scheduler of instants.
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int] | None = None


FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, MONTH_NAMES),
    _Field("day-of-week", 0, 7, WEEKDAY_NAMES),
)

# Syntax of other cron dialects, named so the user learns why it is refused rather than "bad value".
FOREIGN_SYNTAX = {
    "L": "'L' (last day) is not supported",
    "W": "'W' (nearest weekday) is not supported",
    "#": "'#' (nth weekday of the month) is not supported",
    "?": "'?' is not supported; use '*'",
    "H": "'H' (hashed value) is not supported",
}

FOREIGN_WORDS = frozenset({"L", "W", "H", "LW"})
"""Letters that are syntax in other dialects: '5L', 'L-2', '15W', 'LW', 'H', 'H/15'."""
_WORD = re.compile(r"[^\W\d_]+")

MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse(text: str) -> CronExpr:
    """Parse a cron expression; raises ``CronError`` naming the field, the span and the reason."""
    if not isinstance(text, str):
        raise CronError(
            f"a cron expression must be text, not {type(text).__name__}",
            field=None,
            span=(0, 0),
            text=repr(text),
        )
    return _parse_cached(text)


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> CronExpr:
    if len(text) > MAX_LENGTH:
        raise CronError(
            f"the expression is too long ({len(text)} characters, at most {MAX_LENGTH})",
            field=None,
            span=(0, len(text)),
            text=text,
        )
    tokens = _split(text)
    if not tokens:
        raise CronError(
            "the expression is empty; expected 5 fields: minute hour day-of-month month day-of-week",
            field=None,
            span=(0, len(text)),
            text=text,
        )
    macro: str | None = None
    first, start = tokens[0]
    if first.startswith("@"):
        if len(tokens) > 1:
            extra = tokens[1][1]
            raise CronError(
                f"nothing may follow the macro {first}",
                field=None,
                span=(extra, len(text.rstrip(BLANKS))),
                text=text,
            )
        macro = first.lower()
        span = (start, start + len(first))
        if macro == "@reboot":
            raise CronError(
                "@reboot is not supported: it fires when cron starts, not at a time; "
                "use the app's start-at-login setting instead",
                field=None,
                span=span,
                text=text,
            )
        if macro not in MACROS:
            known = ", ".join(sorted(MACROS))
            raise CronError(
                f"unknown macro {first}; known macros: {known}", field=None, span=span, text=text
            )
        # Spans of a macro's fields all point at the macro as typed.
        tokens = [(part, -1) for part in MACROS[macro].split()]
        macro_span = span
    if len(tokens) != len(FIELDS):
        hint = ""
        if len(tokens) in (6, 7):
            hint = "; seconds and years are not supported"
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(tokens)}{hint}",
            field=None,
            span=(tokens[0][1], len(text.rstrip(BLANKS))),
            text=text,
        )
    sets: list[frozenset[int]] = []
    for spec, (token, offset) in zip(FIELDS, tokens, strict=True):
        if offset < 0:
            values = _parse_field(spec, token, 0, token)
        else:
            values = _parse_field(spec, token, offset, text)
        sets.append(values)
    minutes, hours, days, months, weekdays = sets
    weekdays = frozenset(d % 7 for d in weekdays)  # 7 is Sunday too
    fields = tuple(token.lower() for token, _ in tokens)
    dom_star = fields[2].startswith("*")
    dow_star = fields[4].startswith("*")
    if not dom_star and dow_star:
        _check_possible(days, months, tokens, text, macro_span if macro else None)
    return CronExpr(
        text=text,
        fields=(fields[0], fields[1], fields[2], fields[3], fields[4]),
        macro=macro,
        minutes=tuple(sorted(minutes)),
        hours=tuple(sorted(hours)),
        days=tuple(sorted(days)),
        months=tuple(sorted(months)),
        weekdays=tuple(sorted(weekdays)),
        dom_star=dom_star,
        dow_star=dow_star,
        wildcard=fields[0].startswith("*") or fields[1].startswith("*"),
    )


def _split(text: str) -> list[tuple[str, int]]:
    """Blank-separated tokens with their start offsets."""
    tokens: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in BLANKS:
            i += 1
            continue
        j = i
        while j < n and text[j] not in BLANKS:
            j += 1
        tokens.append((text[i:j], i))
        i = j
    return tokens


def _parse_field(spec: _Field, token: str, offset: int, text: str) -> frozenset[int]:
    values: set[int] = set()
    pos = 0
    for item in token.split(","):
        start = offset + pos
        span = (start, start + len(item))
        if not item:
            raise CronError(
                f"{spec.name}: empty list item", field=spec.name, span=(start, start + 1), text=text
            )
        values.update(_parse_item(spec, item, span, text))
        pos += len(item) + 1
    return frozenset(values)


def _parse_item(spec: _Field, item: str, span: tuple[int, int], text: str) -> range:
    def fail(message: str, sub: tuple[int, int] | None = None) -> CronError:
        return CronError(f"{spec.name}: {message}", field=spec.name, span=sub or span, text=text)

    foreign = _foreign_syntax(item, spec.names)
    if foreign is not None:
        at, reason = foreign
        raise fail(reason, (span[0] + at, span[0] + at + 1))
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
        step_span = (span[0] + len(base) + 1, span[1])
        if not step_text:
            raise fail("missing step after '/'", step_span)
        if not _is_number(step_text):
            raise fail(f"step {step_text!r} is not a number", step_span)
        step = int(step_text) if len(step_text) <= 6 else 10**6
        if step == 0:
            raise fail("step 0 is not allowed; the step must be at least 1", step_span)
    base_span = (span[0], span[0] + len(base))
    if base == "*":
        low, high = spec.low, spec.high
    elif "-" in base:
        first, _, last = base.partition("-")
        low = _value(spec, first, (base_span[0], base_span[0] + len(first)), text)
        last_start = base_span[0] + len(first) + 1
        high = _value(spec, last, (last_start, base_span[1]), text)
        if spec.name == "day-of-week" and not (_is_number(first) and _is_number(last)):
            if low % 7 == high % 7:
                high = low  # 'sun-sun', '0-sun', 'sun-7': that day, as '0-0' is
            elif last.lower() == "sun":
                high = 7  # 'mon-sun' is Monday through Sunday, as the spec promises
        if low > high:
            raise fail(f"range {base} is reversed ({low} > {high})", base_span)
    else:
        low = _value(spec, base, base_span, text)
        # 'A/S' means 'A-max/S' as in cronie and Debian cron; plain 'A' is the single value.
        high = spec.high if slash else low
    return range(low, high + 1, step)


def _foreign_syntax(item: str, names: dict[str, int] | None) -> tuple[int, str] | None:
    """Where ``item`` uses another dialect's syntax, and why it is refused; ``None`` when it
    does not, or when it holds a word that is not cron at all ('Hello'): the value check then
    names that word rather than hinting at a feature its author never meant."""
    words = [match for match in _WORD.finditer(item) if not (names and match[0].lower() in names)]
    if any(match[0].upper() not in FOREIGN_WORDS for match in words):
        return None
    found = [(match.start(), FOREIGN_SYNTAX[match[0][0].upper()]) for match in words]
    found += [(at, FOREIGN_SYNTAX[char]) for at, char in enumerate(item) if char in "#?"]
    return min(found, default=None)


def _is_number(text: str) -> bool:
    # str.isdigit() accepts '²' and other Unicode digits that int() then refuses or misreads.
    return bool(text) and all(c in DIGITS for c in text)


def _value(spec: _Field, raw: str, span: tuple[int, int], text: str) -> int:
    if not raw:
        raise CronError(
            f"{spec.name}: missing value in range", field=spec.name, span=span, text=text
        )
    if _is_number(raw):
        # Long digit strings are out of range whatever they say; int() of 10 kB of digits is slow.
        number = int(raw) if len(raw) <= 6 else spec.high + 1
        if not spec.low <= number <= spec.high:
            allowed = f"{spec.low}-{spec.high}"
            if spec.name == "day-of-week":
                allowed = "0-7 (0 and 7 are Sunday)"
            raise CronError(
                f"{spec.name}: {raw} is out of range {allowed}",
                field=spec.name,
                span=span,
                text=text,
            )
        return number
    if spec.names is not None and raw.lower() in spec.names:
        number = spec.names[raw.lower()]
        return number
    if spec.names is not None:
        known = ", ".join(spec.names)
        message = f"{spec.name}: unknown name {raw!r}; use a number or one of {known}"
    else:
        message = f"{spec.name}: {raw!r} is not a number"
    raise CronError(message, field=spec.name, span=span, text=text)


def _check_possible(
    days: frozenset[int],
    months: frozenset[int],
    tokens: list[tuple[str, int]],
    text: str,
    macro_span: tuple[int, int] | None,
) -> None:
    """Reject a day-of-month that no selected month ever has (only when day-of-week is '*')."""
    if any(day <= MONTH_DAYS[month] for month in months for day in days):
        return
    span = macro_span or (tokens[2][1], tokens[2][1] + len(tokens[2][0]))
    day_names = " or ".join(str(d) for d in sorted(days)[:3])
    month_names = ", ".join(calendar.month_name[m] for m in sorted(months))
    if len(months) == 1:
        reason = f"{month_names} never has day {day_names}"
    else:
        reason = f"none of {month_names} ever has day {day_names}"
    raise CronError(
        f"day-of-month: the expression can never fire: {reason}",
        field="day-of-month",
        span=span,
        text=text,
    )
