"""The ``domi-desktop`` command: argparse front door. Heavy imports happen inside the commands.

Schedule commands go through one ``Backend``: the running app over its socket when one runs (it
sees edits at once), else the store opened directly. Both end in ``service.METHODS``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, tzinfo
from itertools import islice
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO

from domi_desktop import __version__
from domi_desktop.errors import CronError, DomiError

if TYPE_CHECKING:
    from domi_desktop.app.rpc_client import RpcClient
    from domi_desktop.store import Store

EXIT_USAGE = 2
"""Bad input of any kind: a bad expression, zone, id or option."""
EXIT_NOT_RUNNING = 3

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
        description="Run recurring jobs on cron schedules, honestly across sleep. "
        "With no command, start the tray app.",
    )
    parser.add_argument("--version", action="version", version=f"domi-desktop {__version__}")
    parser.add_argument(
        "--data-dir", metavar="DIR", help="where the database lives (or DOMI_DATA_DIR)"
    )
    parser.add_argument("--headless", action="store_true", help="run the scheduler with no GUI")
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

    simulate = commands.add_parser(
        "simulate", help="what the scheduler does at each wake (the real decision; no DB)"
    )
    simulate.add_argument("expr", metavar="EXPR")
    simulate.add_argument("--tz", default="local")
    simulate.add_argument("--last-due", required=True, metavar="ISO", help="the last fire's due")
    simulate.add_argument(
        "--wake", required=True, action="append", metavar="ISO", help="a wake (repeat, in order)"
    )
    simulate.add_argument("--json", action="store_true")
    simulate.set_defaults(handler=_simulate)

    schedule = commands.add_parser("schedule", help="add, list, show, edit, remove schedules")
    actions = schedule.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser, required=True
    )
    add = actions.add_parser(
        "add",
        help="add a schedule: ... -- COMMAND [ARG...] or --http URL",
        usage="%(prog)s NAME --cron EXPR [options] -- COMMAND [ARG...]",
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("--cron", required=True, metavar="EXPR")
    _job_options(add, editing=False)
    add.set_defaults(handler=_schedule_add)
    listing = actions.add_parser("list", help="all schedules with their next fire")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_schedule_list)
    show = actions.add_parser("show", help="one schedule in full")
    show.add_argument("id", type=int, metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_schedule_show)
    edit = actions.add_parser("edit", help="change a schedule (a new time or zone restarts it now)")
    edit.add_argument("id", type=int, metavar="ID")
    edit.add_argument("--name")
    edit.add_argument("--cron", metavar="EXPR")
    _job_options(edit, editing=True)
    edit.set_defaults(handler=_schedule_edit)
    for verb, handler, text in (
        ("rm", _schedule_rm, "remove a schedule and its history"),
        ("enable", _schedule_enable, "enable (nothing fires for the time it was disabled)"),
        ("disable", _schedule_disable, "disable: it stops firing"),
    ):
        sub = actions.add_parser(verb, help=text)
        sub.add_argument("id", type=int, metavar="ID")
        sub.add_argument("--json", action="store_true")
        sub.set_defaults(handler=handler)

    runs = commands.add_parser("runs", help="the history of runs, newest first")
    runs.add_argument("--schedule", type=int, metavar="ID")
    runs.add_argument("--status", metavar="S", help="running, succeeded, failed, timed_out, ...")
    runs.add_argument("--limit", type=int, default=20, metavar="N")
    runs.add_argument("--json", action="store_true")
    runs.set_defaults(handler=_runs)

    run_now = commands.add_parser("run-now", help="run a schedule's action now (trigger manual)")
    run_now.add_argument("id", type=int, metavar="ID")
    run_now.add_argument("--json", action="store_true")
    run_now.set_defaults(handler=_run_now)

    secret = commands.add_parser("secret", help="secrets in the OS keyring (names only shown)")
    secret_actions = secret.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser, required=True
    )
    secret_set = secret_actions.add_parser(
        "set", help="store a secret: value from stdin or a prompt"
    )
    secret_set.add_argument("name", metavar="NAME")
    secret_set.set_defaults(handler=_secret_set)
    secret_list = secret_actions.add_parser("list", help="the names of the stored secrets")
    secret_list.add_argument("--json", action="store_true")
    secret_list.set_defaults(handler=_secret_list)
    secret_rm = secret_actions.add_parser("rm", help="delete a secret")
    secret_rm.add_argument("name", metavar="NAME")
    secret_rm.set_defaults(handler=_secret_rm)

    status = commands.add_parser("status", help="is the app running, its last and next wake")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=_status)
    quit_ = commands.add_parser("quit", help="ask the running app to stop")
    quit_.set_defaults(handler=_quit)
    events = commands.add_parser("events", help="print the app's events as JSON lines")
    events.add_argument("--follow", action="store_true", help="keep printing until Ctrl-C")
    events.set_defaults(handler=_events)

    crontab = commands.add_parser("import-crontab", help="import the entries of a crontab file")
    crontab.add_argument("file", metavar="FILE", help="a crontab file, or - for stdin")
    crontab.add_argument("--system", action="store_true", help="system format: a user column")
    crontab.add_argument("--dry-run", action="store_true", help="show what would be imported")
    crontab.add_argument("--disabled", action="store_true", help="import them disabled")
    crontab.add_argument("--tz", default="local", help="zone of the entries (CRON_TZ wins)")
    crontab.add_argument("--json", action="store_true")
    crontab.set_defaults(handler=_import_crontab)
    return parser


def _job_options(parser: argparse.ArgumentParser, *, editing: bool) -> None:
    parser.add_argument("--tz", help="IANA zone or 'local'" + ("" if editing else " (default)"))
    parser.add_argument("--env", action="append", default=[], metavar="K=V")
    parser.add_argument("--secret-env", action="append", default=[], metavar="K=SECRET")
    parser.add_argument("--cwd", metavar="DIR")
    parser.add_argument("--shell", action="store_true", help="the command is one shell line")
    parser.add_argument("--http", metavar="URL", help="an HTTP request instead of a command")
    parser.add_argument("--method", help="HTTP method (default GET)")
    parser.add_argument("--header", action="append", default=[], metavar="K=V")
    parser.add_argument("--secret-header", action="append", default=[], metavar="K=SECRET")
    parser.add_argument("--body", help="HTTP request body")
    parser.add_argument("--overlap", choices=("skip", "queue", "parallel", "replace"))
    parser.add_argument("--catch-up", choices=("latest", "skip"))
    parser.add_argument("--catch-up-within", type=float, metavar="SEC")
    parser.add_argument("--timeout", type=float, metavar="SEC")
    parser.add_argument("--retries", type=int, metavar="N")
    parser.add_argument("--jitter", type=float, metavar="SEC")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(command=[])


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first '--' is the job's command, options and all (argparse's
    # REMAINDER would also swallow our own options given after the schedule's name).
    command: list[str] = []
    if "--" in words:
        split = words.index("--")
        words, command = words[:split], words[split + 1 :]
    args = parser.parse_args(words)
    if command:
        if getattr(args, "handler", None) not in (_schedule_add, _schedule_edit):
            parser.error("'-- COMMAND' is only for 'schedule add' and 'schedule edit'")
        args.command = command
    handler: Handler | None = getattr(args, "handler", None)
    from domi_desktop.platform.timezone import install_os_zone

    install_os_zone()
    try:
        if handler is None:
            return _start_app(args)
        return handler(args)
    except CronError as error:
        _print_cron_error(error, sys.stderr)
        return EXIT_USAGE
    except DomiError as error:
        print(f"domi-desktop: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _print_cron_error(error: CronError, out: TextIO) -> None:
    print(f"domi-desktop: {error.message}", file=out)
    text = error.text.replace("\t", " ")
    if text and "\n" not in text and len(text) <= 200 and text.isprintable():
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


# -- the app and the backend -------------------------------------------------------------------


class Backend(Protocol):
    def call(self, method: str, params: dict[str, Any]) -> Any: ...


class DirectBackend:
    """No app runs: the service over the store, opened for this command only."""

    def __init__(self, store: Store) -> None:
        from domi_desktop.clock import SystemClock
        from domi_desktop.service import Service

        self.store = store
        self.service = Service(store, SystemClock())

    def call(self, method: str, params: dict[str, Any]) -> Any:
        from domi_desktop.service import METHODS

        return METHODS[method](self.service, params)


@contextmanager
def open_store(args: argparse.Namespace) -> Iterator[Store]:
    from domi_desktop.clock import SystemClock
    from domi_desktop.store import Store

    store = Store.open(args.data_dir, now=SystemClock().now())
    try:
        yield store
    finally:
        store.close()


@contextmanager
def backend(args: argparse.Namespace) -> Iterator[Backend]:
    client = _app_client(args)
    if client is not None:
        try:
            yield client
        finally:
            client.close()
        return
    with open_store(args) as store:
        yield DirectBackend(store)


def _app_client(args: argparse.Namespace) -> RpcClient | None:
    """The running app's RPC client, if an instance runs for this data dir."""
    from domi_desktop.app.rpc_client import connect_to_app

    return connect_to_app(args.data_dir)


def _status(args: argparse.Namespace) -> int:
    from domi_desktop.store import resolve_data_dir

    client = _app_client(args)
    if client is None:
        state = {"running": False, "data_dir": str(resolve_data_dir(args.data_dir))}
        if args.json:
            print(json.dumps(state))
        else:
            print(f"domi-desktop is not running (data dir {state['data_dir']})")
        return EXIT_NOT_RUNNING
    try:
        state = client.call("app.status", {})
    finally:
        client.close()
    if args.json:
        print(json.dumps(state, ensure_ascii=False))
        return 0
    last = state["last_wake"] or {}
    print(f"domi-desktop {state['version']} running, pid {state['pid']}")
    print(f"  data dir   {state['data_dir']}")
    print(f"  socket     {state['socket']}")
    print(f"  schedules  {state['schedules']}, running runs {state['running_runs'] or 'none'}")
    print(f"  last wake  {_short(last.get('at'))} ({last.get('reason', '-')})")
    print(f"  next wake  {_short(state['next_wake'])}")
    return 0


def _quit(args: argparse.Namespace) -> int:
    client = _app_client(args)
    if client is None:
        print("domi-desktop is not running")
        return EXIT_NOT_RUNNING
    try:
        client.call("app.quit", {})
    finally:
        client.close()
    print("domi-desktop is stopping")
    return 0


def _events(args: argparse.Namespace) -> int:
    client = _app_client(args)
    if client is None:
        print("domi-desktop is not running", file=sys.stderr)
        return EXIT_NOT_RUNNING
    try:
        for event in client.events():
            print(json.dumps({"event": event["method"], **event.get("params", {})}), flush=True)
            if not args.follow:
                break
    finally:
        client.close()
    return 0


def _start_app(args: argparse.Namespace) -> int:
    if args.headless:
        from domi_desktop.app.headless import run_headless

        with open_store(args) as store:
            return run_headless(store)
    from domi_desktop.app.tray import run_tray

    return run_tray(args)


def _emit(args: argparse.Namespace, value: Any, human: Callable[[Any], None]) -> int:
    if getattr(args, "json", False):
        print(json.dumps(value, ensure_ascii=False))
    else:
        human(value)
    return 0


# -- preview and simulate ----------------------------------------------------------------------


def _preview(args: argparse.Namespace) -> int:
    from domi_desktop.cron import describe, parse, upcoming, zone_for
    from domi_desktop.platform.timezone import local_zone_name

    if not 1 <= args.n <= 1000:
        raise UsageError(f"-n: {args.n} is out of range 1-1000")
    expr = parse(args.expr)
    zone = zone_for(args.tz)
    start = (
        parse_instant(args.after, zone, "--after")
        if args.after
        else datetime.now(zone).replace(second=0, microsecond=0)
    )
    fires = list(islice(upcoming(expr, start, zone), args.n))
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


def _simulate(args: argparse.Namespace) -> int:
    from domi_desktop.cron import next_run, prev_run, zone_for
    from domi_desktop.scheduler.simulate import simulate

    zone = zone_for(args.tz)
    last_due = parse_instant(args.last_due, zone, "--last-due")
    wakes = [parse_instant(text, zone, "--wake") for text in args.wake]
    result = simulate(args.expr, args.tz, last_due, wakes)
    if args.json:
        print(json.dumps({"wakes": [wake.to_json() for wake in result]}))
        return 0
    print(f"{args.expr} in {args.tz}, last fired for {last_due.astimezone(zone):%a %Y-%m-%d %H:%M}")
    fired_for: datetime | None = None
    for wake in result:
        at = f"{wake.at:%a %Y-%m-%d %H:%M:%S}"
        if not wake.fire:
            upcoming = next_run(args.expr, wake.at, zone)
            due = prev_run(args.expr, wake.at, zone)
            if due is not None and due == fired_for:
                print(f"  woke {at}: already fired for {due:%a %H:%M}, no fire")
            else:
                soon = f"{upcoming:%a %H:%M}" if upcoming else "never"
                print(f"  woke {at}: nothing due yet, no fire (next due {soon})")
            continue
        assert wake.due is not None
        fired_for = wake.due
        timing = "LATE (catch-up, runs once)" if wake.late else "on time"
        line = f"  woke {at}: fires for {wake.due:%a %H:%M}, {timing}"
        if wake.missed_count:
            listed = ", ".join(f"{m:%a %H:%M}" for m in wake.skipped[-5:])
            more = "" if wake.missed_count <= 5 else f" (the latest 5 of {wake.missed_count})"
            line += f"; {wake.missed_count} earlier skipped: {listed}{more}"
        print(line)
    return 0


# -- schedules ---------------------------------------------------------------------------------


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
    policies: dict[str, Any] = {}
    for name in ("overlap", "catch_up", "catch_up_within", "timeout", "retries", "jitter"):
        value = getattr(args, name)
        if value is not None:
            policies[name] = value
    if policies:
        params["policies"] = policies
    return params


def _schedule_add(args: argparse.Namespace) -> int:
    _check_locally(args.cron)
    params = {"name": args.name, "expr": args.cron, **_job_params(args, editing=False)}
    with backend(args) as api:
        created = api.call("schedule.create", params)
    if args.json:
        print(json.dumps({"id": created["id"]}))
    else:
        print(created["id"])
    return 0


def _schedule_edit(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"id": args.id, **_job_params(args, editing=True)}
    if args.name is not None:
        params["name"] = args.name
    if args.cron is not None:
        _check_locally(args.cron)
        params["expr"] = args.cron
    with backend(args) as api:
        return _emit(args, api.call("schedule.update", params), _print_schedule)


def _check_locally(expr: str) -> None:
    """Parse here first, so that a bad expression gets its caret line under the span."""
    from domi_desktop.cron import parse

    parse(expr)


def _schedule_list(args: argparse.Namespace) -> int:
    with backend(args) as api:
        schedules = api.call("schedule.list", {})
    if args.json:
        keys = ("id", "name", "expr", "tz", "enabled", "last_due", "next_run")
        print(json.dumps([{k: s[k] for k in keys} for s in schedules], ensure_ascii=False))
        return 0
    if not schedules:
        print("No schedules yet. Add one: domi-desktop schedule add NAME --cron EXPR -- COMMAND")
        return 0
    rows = [
        (
            str(s["id"]),
            s["name"],
            s["expr"],
            s["tz"],
            "yes" if s["enabled"] else "no",
            _short(s["next_run"], s["tz"]) if s["next_run"] else "-",
        )
        for s in schedules
    ]
    _table(("ID", "NAME", "CRON", "ZONE", "ON", "NEXT"), rows)
    return 0


def _schedule_show(args: argparse.Namespace) -> int:
    with backend(args) as api:
        return _emit(args, api.call("schedule.get", {"id": args.id}), _print_schedule)


def _print_schedule(schedule: dict[str, Any]) -> None:
    action = schedule["action"]
    if action["kind"] == "http":
        what = f"{action['method']} {action['url']}"
    else:
        what = action["shell"] or shlex.join(action["argv"])
    lines = [
        ("id", schedule["id"]),
        ("name", schedule["name"]),
        ("cron", f"{schedule['expr']}  ({schedule['description']})"),
        ("zone", schedule["tz"]),
        ("enabled", "yes" if schedule["enabled"] else "no"),
        ("runs", what),
        ("last due", schedule["last_due"] or "-"),
        ("next", schedule["next_run"] or "-"),
    ]
    if action["kind"] == "command":
        if action["cwd"]:
            lines.append(("cwd", action["cwd"]))
        for key, value in action["env"].items():
            lines.append(("env", f"{key}={value}"))
        for key, value in action["secret_env"].items():
            lines.append(("secret env", f"{key} <- keyring:{value}"))
    policies = schedule["policies"]
    lines.append(("policies", ", ".join(f"{k}={v}" for k, v in policies.items() if v is not None)))
    for label, value in lines:
        print(f"{label:>11}: {value}")


def _simple(method: str) -> Handler:
    def handler(args: argparse.Namespace) -> int:
        with backend(args) as api:
            result = api.call(method, {"id": args.id})
        if args.json:
            print(json.dumps(result, ensure_ascii=False))
        elif method == "schedule.delete":
            print(f"removed schedule {args.id}")
        else:
            state = "enabled" if result["enabled"] else "disabled"
            print(f"schedule {args.id} {state}; next: {result['next_run'] or '-'}")
        return 0

    return handler


_schedule_rm = _simple("schedule.delete")
_schedule_enable = _simple("schedule.enable")
_schedule_disable = _simple("schedule.disable")


def _runs(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.schedule is not None:
        params["schedule_id"] = args.schedule
    if args.status is not None:
        params["status"] = args.status
    with backend(args) as api:
        runs = api.call("schedule.runs", params)
        schedules = {} if args.json else {s["id"]: s for s in api.call("schedule.list", {})}
    if args.json:
        print(json.dumps(runs, ensure_ascii=False))
        return 0
    if not runs:
        print("No runs.")
        return 0
    rows = []
    for run in runs:
        schedule = schedules.get(
            run["schedule_id"], {"name": str(run["schedule_id"]), "tz": "local"}
        )
        note = run["reason"] or ""
        if run["missed_count"]:
            note = (note + f" {run['missed_count']} missed").strip()
        rows.append(
            (
                str(run["id"]),
                schedule["name"],
                _short(run["due"], schedule["tz"]),
                _short(run["started_at"], schedule["tz"]),
                run["status"],
                run["trigger"] + (" LATE" if run["late"] else ""),
                "" if run["exit_code"] is None else str(run["exit_code"]),
                note,
            )
        )
    _table(("RUN", "SCHEDULE", "DUE", "STARTED", "STATUS", "TRIGGER", "EXIT", "NOTE"), rows)
    return 0


def _run_now(args: argparse.Namespace) -> int:
    client = _app_client(args)
    if client is not None:
        result = client.call("schedule.run_now", {"id": args.id, "wait": True})
        return _print_run_outcome(args, result)
    from domi_desktop.clock import SystemClock
    from domi_desktop.runtime import run_here
    from domi_desktop.secrets import KeyringSecretStore
    from domi_desktop.service import run_json

    with open_store(args) as store:
        run = run_here(store, args.id, SystemClock(), KeyringSecretStore())
        return _print_run_outcome(args, run_json(run))


def _print_run_outcome(args: argparse.Namespace, run: dict[str, Any]) -> int:
    if args.json:
        print(json.dumps(run, ensure_ascii=False))
    else:
        if run["output_tail"]:
            print(run["output_tail"], end="" if run["output_tail"].endswith("\n") else "\n")
        outcome = run["status"] + (f" ({run['reason']})" if run["reason"] else "")
        print(f"run {run['id']}: {outcome}; log: {run['log_path']}", file=sys.stderr)
    return 0 if run["status"] == "succeeded" else 1


# -- secrets -----------------------------------------------------------------------------------


def _secrets() -> Any:
    from domi_desktop.secrets import KeyringSecretStore

    return KeyringSecretStore()


def _secret_set(args: argparse.Namespace) -> int:
    import getpass

    if sys.stdin.isatty():
        value = getpass.getpass(f"Value for secret {args.name} (not shown): ")
    else:
        value = sys.stdin.read().removesuffix("\n")
    if not value:
        raise UsageError("the secret value is empty; nothing stored")
    _secrets().set(args.name, value)
    print(f"stored secret {args.name} in the OS keyring")
    return 0


def _secret_list(args: argparse.Namespace) -> int:
    names = _secrets().names()
    return _emit(args, names, lambda items: print("\n".join(items) if items else "No secrets."))


def _secret_rm(args: argparse.Namespace) -> int:
    _secrets().delete(args.name)
    print(f"deleted secret {args.name}")
    return 0


# -- import-crontab ----------------------------------------------------------------------------


def _import_crontab(args: argparse.Namespace) -> int:
    from domi_desktop.crontab import MAX_CHARACTERS, read_crontab, to_action
    from domi_desktop.service import action_json

    try:
        if args.file == "-":
            text = sys.stdin.read(MAX_CHARACTERS + 1)
        else:
            with open(args.file, encoding="utf-8", errors="replace") as file:
                text = file.read(MAX_CHARACTERS + 1)
    except OSError as error:
        raise UsageError(f"cannot read {args.file}: {error.strerror or error}") from None
    table = read_crontab(text, system=args.system, known_users=frozenset(_known_users()))
    for problem in table.problems:
        where = f"{args.file}:{problem.line}" + (
            f":{problem.column}" if problem.column is not None else ""
        )
        print(f"{where}: {problem.severity}: {problem.message}", file=sys.stderr)
    planned = [
        {
            "name": entry.name,
            "expr": entry.expr,
            "tz": entry.tz or args.tz,
            "action": action_json(to_action(entry)),
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
            print(f"{verb} {ident}line {item['line']}: {item['expr']}  {item['name']}")
        print(f"{len(planned)} {verb}, {errors} line(s) not importable", file=sys.stderr)
    return EXIT_USAGE if not planned and errors else 0


def _known_users() -> list[str]:
    try:
        import pwd
    except ImportError:
        return []
    return [entry.pw_name for entry in pwd.getpwall()]


# -- output helpers ----------------------------------------------------------------------------


def _short(moment: str | None, tz: str = "local") -> str:
    if not moment:
        return "-"
    from domi_desktop.cron import zone_for

    value = datetime.fromisoformat(moment)
    try:
        value = value.astimezone(zone_for(tz))
    except DomiError:
        value = value.astimezone(UTC)
    return f"{value:%a %Y-%m-%d %H:%M}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        print(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)
            ).rstrip()
        )
