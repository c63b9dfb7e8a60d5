"""The ``domi-desktop`` command: argparse front door. Heavy imports happen inside the commands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, tzinfo
from typing import NoReturn, TextIO

from domi_desktop import __version__
from domi_desktop.errors import CronError, DomiError

EXIT_USAGE = 2
"""Bad input of any kind: a bad expression, zone, id or option."""

Handler = Callable[[argparse.Namespace], int]


class UsageError(DomiError):
    """A command line that cannot be carried out; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="domi-desktop",
        description="Run recurring jobs on cron schedules, honestly across sleep.",
    )
    parser.add_argument("--version", action="version", version=f"domi-desktop {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    preview = commands.add_parser(
        "preview", help="show what an expression means and when it fires next (no DB needed)"
    )
    preview.add_argument("expr", metavar="EXPR", help="a cron expression, quoted")
    preview.add_argument("--tz", default="local", help="IANA zone name or 'local' (default)")
    preview.add_argument(
        "-n", type=int, default=10, metavar="N", help="how many fires (default 10)"
    )
    preview.add_argument("--after", metavar="ISO8601", help="start instead of now")
    preview.add_argument("--lang", choices=("en", "zh"), default="en")
    preview.add_argument("--json", action="store_true", help="one JSON object for scripts")
    preview.set_defaults(handler=_preview)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return handler(args)
    except CronError as error:
        _print_cron_error(error, sys.stderr)
        return EXIT_USAGE
    except DomiError as error:
        print(f"domi-desktop: {error}", file=sys.stderr)
        return EXIT_USAGE


def _print_cron_error(error: CronError, out: TextIO) -> None:
    print(f"domi-desktop: {error.message}", file=out)
    text = error.text.replace("\t", " ")
    if text and "\n" not in text and len(text) <= 200:
        start, end = error.span
        print(f"  {text}", file=out)
        print("  " + " " * start + "^" * max(1, end - start), file=out)


def parse_instant(text: str, zone: tzinfo, option: str) -> datetime:
    """An ISO 8601 instant; without an offset it is read in ``zone``."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{option}: {text!r} is not an ISO 8601 date-time (e.g. 2024-03-09T12:00:00-05:00)"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=zone)


def _preview(args: argparse.Namespace) -> int:
    from domi_desktop.cron import describe, local_zone_name, next_run, parse, zone_for

    if not 1 <= args.n <= 1000:
        raise UsageError(f"-n: {args.n} is out of range 1-1000")
    expr = parse(args.expr)
    zone = zone_for(args.tz)
    start = (
        parse_instant(args.after, zone, "--after")
        if args.after
        else datetime.now(zone).replace(second=0, microsecond=0)
    )
    fires: list[datetime] = []
    cursor: datetime | None = start
    while cursor is not None and len(fires) < args.n:
        cursor = next_run(expr, cursor, zone)
        if cursor is not None:
            fires.append(cursor)
    description = describe(expr, args.lang)
    if args.json:
        print(
            json.dumps(
                {
                    "expr": args.expr,
                    "tz": args.tz,
                    "description": description,
                    "next": [fire.isoformat() for fire in fires],
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(description)
    zone_label = args.tz if args.tz != "local" else f"local: {local_zone_name() or 'OS zone'}"
    print(f"\nNext {len(fires)} in {zone_label}:")
    for fire in fires:
        print("  " + format_fire(fire))
    os_zone = local_zone_name()
    if args.tz != "local" and os_zone and os_zone != args.tz:
        here = zone_for("local")
        if any(fire.utcoffset() != fire.astimezone(here).utcoffset() for fire in fires):
            print(f"\nThe same in your zone ({os_zone}):")
            for fire in fires:
                print("  " + format_fire(fire.astimezone(here)))
    return 0


def format_fire(fire: datetime) -> str:
    """``Sun 2024-03-10 03:00 -04:00 EDT``, marked when the day has a DST transition."""
    offset = fire.strftime("%z")
    text = f"{fire:%a %Y-%m-%d %H:%M} {offset[:3]}:{offset[3:]} {fire.tzname() or ''}".rstrip()
    return text + ("  ← DST change this day" if transition_day(fire) else "")


def transition_day(moment: datetime) -> bool:
    """True when the UTC offset of the local day of ``moment`` changes during that day."""
    zone = moment.tzinfo
    start = datetime(moment.year, moment.month, moment.day, tzinfo=zone)
    return start.utcoffset() != (start + timedelta(days=1)).utcoffset()
