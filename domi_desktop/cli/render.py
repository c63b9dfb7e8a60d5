"""What the CLI prints: tables, one schedule, a run's outcome, errors with a caret."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from domi_desktop import timefmt
from domi_desktop.errors import CronError, DomiError
from domi_desktop.model import printed_nothing

if TYPE_CHECKING:
    from domi_desktop.model import SessionTriggers


def print_cron_error(error: CronError, out: TextIO) -> None:
    print(f"domi-desktop: {error.message}", file=out)
    text = error.text.replace("\t", " ")
    if text and "\n" not in text and len(text) <= 200 and text.isprintable():
        start, end = error.span
        print(f"  {text}", file=out)
        print("  " + " " * start + "^" * max(1, end - start), file=out)


def emit(args: argparse.Namespace, value: Any, human: Callable[[Any], None]) -> int:
    if getattr(args, "json", False):
        print(json.dumps(value, ensure_ascii=False))
    else:
        human(value)
    return 0


def printable(text: object) -> str:
    """``text`` safe for a terminal: control characters (C0, DEL, C1) and bidi controls shown
    as Python escapes (``\\n``, ``\\x1b``, ``\\u202e``), so that a name cannot move the cursor,
    recolour or hide what follows, or pass for another text."""
    from domi_desktop.frontdoor.wire import is_control

    value = str(text)
    if not any(is_control(char) for char in value):
        return value
    return "".join(
        char.encode("unicode_escape").decode("ascii") if is_control(char) else char
        for char in value
    )


def print_schedule(shown: dict[str, Any]) -> None:
    """One schedule for people: times on the local clock as ``list`` shows them, the policies in
    words, a schedule its session moments alone run said as such."""
    from domi_desktop.cli.words import only_words, policy_lines
    from domi_desktop.frontdoor.wire import parse_policies

    # The rest is shown as stored, a name no longer allowed included (escaped by ``printable``).
    policies = parse_policies(shown["policies"])
    tz = shown["tz"]
    action = shown["action"]
    if action["kind"] == "http":
        what = f"{action['method']} {action['url']}"
    else:
        what = action["shell"] or shlex.join(action["argv"])
    only = only_words(policies.session)
    lines: list[tuple[str, object]] = [("id", shown["id"]), ("name", shown["name"])]
    if shown.get("once_at"):
        done = " (done: it ran once)" if shown.get("done") else ""
        lines.append(("once", when(shown["once_at"], tz) + done))
    elif only is None:
        lines.append(("cron", f"{shown['expr']}  ({shown['description']})"))
    else:
        lines += [
            ("when", f"{only} (not by its time)"),
            ("cron", f"{shown['expr']}  (not used: it runs {only})"),
        ]
    lines += [
        ("zone", tz),
        ("enabled", "yes" if shown["enabled"] else "no"),
        ("runs", what),
        ("last due", when(shown["last_due"], tz)),
        ("next", next_words(shown)),
    ]
    if shown.get("skipping"):
        lines.append(("skipping", when(shown["skipping"], tz)))
    if shown.get("snoozed"):
        snoozed = shown["snoozed"]
        lines.append(
            ("snoozed", f"due {when(snoozed['due'], tz)}, runs {when(snoozed['until'], tz)}")
        )
    if action["kind"] == "command":
        if action["cwd"]:
            lines.append(("cwd", action["cwd"]))
        for key, value in action["env"].items():
            lines.append(("env", f"{key}={value}"))
        for key, value in action["secret_env"].items():
            lines.append(("secret env", f"{key} <- keyring:{value}"))
    lines += policy_lines(policies)
    # One label, then the notes' own lines under it, as the user wrote them.
    for index, line in enumerate(shown["notes"].split("\n") if shown["notes"] else ()):
        lines.append(("notes" if index == 0 else "", line))
    for label, value in lines:
        print(
            f"{label:>11}: {printable(value)}" if label else f"{'':13}{printable(value)}".rstrip()
        )


def next_words(shown: dict[str, Any]) -> str:
    """When a listed schedule runs next: its next fire for people, or the moments that alone
    run it (``at login``), or ``-``."""
    from domi_desktop.cli.words import moments_words

    session = session_of(shown)
    if shown["enabled"] and session.only:
        return moments_words(session)
    if shown.get("done"):
        return "done (ran once)"
    if shown.get("skipping") and shown["skipping"] == shown["next_run"]:
        return "skipping " + when(shown["skipping"], shown["tz"])
    return when(shown["next_run"], shown["tz"]) if shown["next_run"] else "-"


def session_of(shown: dict[str, Any]) -> SessionTriggers:
    """The session triggers of a schedule as the service shows it (none for a broken row)."""
    from domi_desktop.frontdoor.triggers import parse_session
    from domi_desktop.model import SessionTriggers

    return parse_session((shown.get("policies") or {}).get("session"), SessionTriggers())


def print_run_outcome(args: argparse.Namespace, run: dict[str, Any]) -> int:
    if args.json:
        print(json.dumps(run, ensure_ascii=False))
    else:
        if run["output_tail"]:
            print(run["output_tail"], end="" if run["output_tail"].endswith("\n") else "\n")
        outcome = run["status"] + (f" ({run['reason']})" if run["reason"] else "")
        log = (
            "none, nothing was printed" if printed_nothing(run["output_tail"]) else run["log_path"]
        )
        print(f"run {run['id']}: {outcome}; log: {log}", file=sys.stderr)
    return 0 if run["status"] == "succeeded" else 1


def when(moment: str | None, tz: str = "local") -> str:
    """An ISO instant for people: the local clock, the schedule's own beside it when it differs."""
    if not moment:
        return "-"
    from domi_desktop.cron import local_zone, zone_for

    value = datetime.fromisoformat(moment)
    try:
        zone = zone_for(tz)
    except DomiError:
        zone = UTC
    return timefmt.for_person(
        value, local_zone(), schedule_zone=zone, schedule_zone_name=tz, year=True
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    shown = [[printable(cell) for cell in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in shown) for i in range(len(headers))]
    for row in shown:
        print(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)
            ).rstrip()
        )
