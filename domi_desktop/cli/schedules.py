"""``schedule add/edit/list/show/rm/enable/disable`` and ``import-crontab``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from domi_desktop.cli.backend import backend
from domi_desktop.cli.exits import EXIT_USAGE
from domi_desktop.cli.monitor_options import monitor_params
from domi_desktop.cli.render import (
    emit,
    next_words,
    print_schedule,
    printable,
    session_of,
    table,
)
from domi_desktop.errors import UsageError


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise UsageError(f"{option}: {value!r} is not NAME=VALUE")
        pairs[name] = rest
    return pairs


def _job_params(args: argparse.Namespace, *, editing: bool) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if args.tz is not None:
        params["tz"] = args.tz
    elif not editing:
        params["tz"] = "local"
    command = list(args.command)
    if args.http:
        if command:
            raise UsageError("give either --http URL or -- COMMAND, not both")
        params["action"] = {
            "kind": "http",
            "url": args.http,
            "method": args.method or "GET",
            "headers": _pairs(args.header, "--header"),
            "secret_headers": _pairs(args.secret_header, "--secret-header"),
            "body": args.body,
        }
    elif command:
        params["action"] = {
            "kind": "command",
            "argv": [] if args.shell else command,
            "shell": " ".join(command) if args.shell else None,
            "cwd": args.cwd,
            "env": _pairs(args.env, "--env"),
            "secret_env": _pairs(args.secret_env, "--secret-env"),
        }
    elif not editing:
        raise UsageError("say what to run: -- COMMAND [ARG...] or --http URL")
    elif args.env or args.secret_env or args.cwd or args.shell:
        raise UsageError(
            "to change the command's env, cwd or shell, give the command again after --"
        )
    if args.notes is not None:
        params["notes"] = args.notes
    policies: dict[str, Any] = {}
    for name in (
        "overlap", "catch_up", "catch_up_within", "timeout", "retries", "jitter", "wake_to_run",
        "background",
    ):  # fmt: skip
        value = getattr(args, name)
        if value is not None:
            policies[name] = value
    policies.update(_conditions_and_alerts(args))
    policies.update(_placement_params(args))
    policies.update(monitor_params(args))
    if policies:
        params["policies"] = policies
    return params


_CONDITIONS = {
    "requires_network": "requires_network", "unmetered_only": "unmetered_only",
    "on_ac_power": "on_ac_power", "min_battery": "min_battery_percent",
    "wait_at_most": "wait_at_most", "on_deadline": "on_deadline",
    "stop_if_lost": "stop_if_lost", "keep_awake": "keep_awake",
    "volume": "volume", "network_name": "network_name", "path_exists": "path_exists",
    "window": "window", "at_window_end": "at_window_end", "on_return": "on_return",
}  # fmt: skip
_SESSION = ("at_login", "at_unlock", "on_resume", "before_sleep", "min_interval")
_ALERTS = {
    "notify_every": "notify_every", "auto_pause_after": "auto_pause_after",
    "stale_after": "stale_after",
}  # fmt: skip


def _conditions_and_alerts(args: argparse.Namespace) -> dict[str, Any]:
    """The policies' ``conditions`` and ``alerts`` objects, with only the options given."""
    found: dict[str, Any] = {}
    conditions = {
        field: getattr(args, option)
        for option, field in _CONDITIONS.items()
        if getattr(args, option, None) is not None
    }
    if getattr(args, "window", None):
        from domi_desktop.scheduler.window import parse_window

        parse_window(args.window, "--window")  # said at the option, before any request
    if getattr(args, "when_away", None) is not None:
        if not 0 < args.when_away <= 7 * 24 * 60:  # NaN and infinity fail it too
            raise UsageError(
                f"--when-away: must be more than 0 minutes and at most a week (10080),"
                f" not {args.when_away:g}"
            )
        conditions["away"] = args.when_away * 60
    if getattr(args, "metered_after", None) is not None:
        conditions["metered_after"] = args.metered_after * 86400
    if conditions:
        found["conditions"] = conditions
    alerts = {
        field: getattr(args, option)
        for option, field in _ALERTS.items()
        if getattr(args, option, None) is not None
    }
    if alerts:
        found["alerts"] = alerts
    session = {
        name: getattr(args, name) for name in _SESSION if getattr(args, name, None) is not None
    }
    if session:
        found["session"] = session
    return found


def _placement_params(args: argparse.Namespace) -> dict[str, Any]:
    if args.run_on:
        return {"placement": "machines", "machines": args.run_on}
    if args.placement is not None:
        return {"placement": args.placement}
    return {}


def add_schedule(args: argparse.Namespace) -> int:
    if (args.cron is None) == (args.at is None):
        raise UsageError("say when: --cron EXPR for a recurring schedule, or --at TIME for once")
    when = {"at": args.at} if args.cron is None else {"expr": args.cron}
    if args.cron is not None:
        _check_locally(args.cron)
    params = {"name": args.name, **when, **_job_params(args, editing=False)}
    with backend(args) as api:
        created = api.call("schedule.create", params)
    if args.json:
        print(json.dumps({"id": created["id"]}))
    else:
        print(created["id"])
    return 0


def edit_schedule(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"id": args.id, **_job_params(args, editing=True)}
    if args.name is not None:
        params["name"] = args.name
    if args.cron is not None and args.at is not None:
        raise UsageError("give either --cron EXPR or --at TIME, not both")
    if args.cron is not None:
        _check_locally(args.cron)
        params["expr"] = args.cron
    if args.at is not None:
        params["at"] = args.at
    with backend(args) as api:
        return emit(args, api.call("schedule.update", params), print_schedule)


def _check_locally(expr: str) -> None:
    """Parse here first, so that a bad expression gets its caret line under the span."""
    from domi_desktop.cron import parse

    parse(expr)


def list_schedules(args: argparse.Namespace) -> int:
    with backend(args) as api:
        schedules = api.call("schedule.list", {})
    if args.json:
        keys = ("id", "name", "expr", "tz", "enabled", "last_due", "next_run", "notes")
        print(json.dumps([{k: s[k] for k in keys} for s in schedules], ensure_ascii=False))
        return 0
    if not schedules:
        print("No schedules yet. Add one: domi-desktop schedule add NAME --cron EXPR -- COMMAND")
        return 0
    rows = [
        (
            str(s["id"]),
            s["name"],
            _when_it_runs(s),
            s["tz"],
            "BROKEN" if s.get("broken") else "yes" if s["enabled"] else "no",
            next_words(s),
        )
        for s in schedules
    ]
    table(("ID", "NAME", "CRON", "ZONE", "ON", "NEXT"), rows)
    for s in schedules:
        if s.get("broken"):
            print(f"domi-desktop: {printable(s['broken'])}", file=sys.stderr)
    return 0


def _when_it_runs(shown: dict[str, Any]) -> str:
    """The expression, or ``only at login`` when the session's moments alone run it."""
    from domi_desktop.cli.words import only_words

    if shown.get("once_at"):
        return "once"
    return only_words(session_of(shown)) or shown["expr"]


def show_schedule(args: argparse.Namespace) -> int:
    with backend(args) as api:
        return emit(args, api.call("schedule.get", {"id": args.id}), print_schedule)


def _simple(method: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        with backend(args) as api:
            result = api.call(method, {"id": args.id})
        if args.json:
            print(json.dumps(result, ensure_ascii=False))
        elif method == "schedule.delete":
            print(f"removed schedule {args.id}")
        else:
            state = "enabled" if result["enabled"] else "disabled"
            print(f"schedule {args.id} {state}; next: {next_words(result)}")
        return 0

    return handler


remove_schedule = _simple("schedule.delete")

enable_schedule = _simple("schedule.enable")

disable_schedule = _simple("schedule.disable")


def import_crontab(args: argparse.Namespace) -> int:
    from domi_desktop.cli.transfer import read_input
    from domi_desktop.crontab import MAX_CHARACTERS, read_crontab, to_action
    from domi_desktop.frontdoor.triggers import imported_policies
    from domi_desktop.frontdoor.wire import action_json

    # Bytes, not text: at most 4 bytes a character, so read_crontab still sees a file too long.
    data = read_input(args.file, 4 * MAX_CHARACTERS + 4)
    name = printable(args.file)
    text = _decode(data, name, args.encoding)
    table = read_crontab(text, system=args.system, known_users=frozenset(_known_users()))
    for problem in table.problems:
        where = f"{name}:{problem.line}" + (
            f":{problem.column}" if problem.column is not None else ""
        )
        print(f"{where}: {problem.severity}: {problem.message}", file=sys.stderr)
    planned = [
        {
            "name": entry.name,
            "expr": entry.expr,
            "tz": entry.tz or args.tz,
            "action": action_json(to_action(entry)),
            **imported_policies(entry.at_login),
            "enabled": not args.disabled,
            "line": entry.line,
        }
        for entry in table.entries
    ]
    errors = sum(1 for p in table.problems if p.severity == "error")
    created: list[int] = []
    if not args.dry_run and planned:
        with backend(args) as api:
            for item in planned:
                params = {k: v for k, v in item.items() if k != "line"}
                created.append(api.call("schedule.create", params)["id"])
    if args.json:
        print(json.dumps({"imported": created, "planned": planned}, ensure_ascii=False))
    else:
        verb = "would import" if args.dry_run else "imported"
        for index, item in enumerate(planned):
            ident = f"#{created[index]} " if created else ""
            print(f"{verb} {ident}line {item['line']}: {item['expr']}  {printable(item['name'])}")
        print(f"{len(planned)} {verb}, {errors} line(s) not importable", file=sys.stderr)
    return EXIT_USAGE if not planned and errors else 0


def _decode(data: bytes, name: str, encoding: str | None) -> str:
    """The crontab as text. Cron hands a command's bytes to the shell as they are, while a
    schedule keeps text: bytes that are not UTF-8 are refused, naming their lines, unless the
    file's encoding is given; then each line that reads otherwise than as UTF-8 is named in a
    warning, to be checked (a path in it now names the UTF-8 spelling of the file)."""
    lines = data.split(b"\n")
    if encoding is None:
        bad = [number for number, line in enumerate(lines, 1) if _utf8(line) is None]
        if not bad:
            return data.decode("utf-8")
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise UsageError(
            f"{name}: line(s) {', '.join(map(str, bad[:10]))}{more} are not UTF-8; nothing was"
            " imported. Give the file's encoding to import it as text, e.g. --encoding latin-1"
        )
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        number = data.count(b"\n", 0, error.start) + 1
        raise UsageError(
            f"{name}:{number}: not {encoding} (byte {error.start}); nothing was imported"
        ) from None
    except (LookupError, ValueError):
        # Unknown, not a text encoding (rot13, hex), or no name at all (a NUL, bytes that are
        # not UTF-8: the lookup cannot even spell it).
        raise UsageError(f"--encoding: {encoding!r} is not a text encoding Python knows") from None
    for number, line in enumerate(lines, 1):
        read = line.decode(encoding, "replace")  # a line of a UTF-16 file is not one alone
        if read != _utf8(line):
            print(
                f"{name}:{number}: warning: read as {encoding}, check it: {printable(read)}",
                file=sys.stderr,
            )
    return text


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _known_users() -> list[str]:
    if sys.platform == "win32":
        return []
    import pwd

    return [entry.pw_name for entry in pwd.getpwall()]
