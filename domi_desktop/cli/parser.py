"""The command line's grammar: every command, its options and its handler.

A command line names one command, and only that command's parser is built (``parse``): building
all of them took 6 ms of the 48 ms that ``domi-desktop status`` took. Handlers are named
``"module.function"`` inside this package and imported once chosen (``handler_of``), so that
``status`` does not import what ``schedule add`` or ``export`` need.
"""

from __future__ import annotations

import argparse
from types import ModuleType

from domi_desktop import __version__
from domi_desktop.cli.arguments import text_path
from domi_desktop.cli.exits import EXIT_USAGE
from domi_desktop.cli.job_options import add_job_options
from domi_desktop.cli.monitor_options import add_monitor_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing, 2 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn, TypeAlias

    Handler: TypeAlias = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, as every other refusal: the usage block argparse prints first buried the
        reason under a screenful of options. The line says where the whole story is."""
        from domi_desktop.cli.render import printable  # a refusal only: no cost to the fast path

        self.exit(EXIT_USAGE, f"{self.prog}: {printable(message)} (see {self.prog} --help)\n")


if TYPE_CHECKING:
    Subcommands: TypeAlias = argparse._SubParsersAction[_Parser]


def _top() -> _Parser:
    parser = _Parser(
        prog="domi-desktop",
        description="Run recurring jobs on cron schedules, honestly across sleep. "
        "With no command, start the tray app.",
    )
    parser.add_argument("--version", action="version", version=f"domi-desktop {__version__}")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        type=text_path,
        help="where the database lives (or DOMI_DATA_DIR)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="a shared PostgreSQL store, postgresql://… (or DOMI_STORE); default: the SQLite "
        "file in the data dir",
    )
    parser.add_argument(
        "--machine",
        metavar="NAME",
        help="this machine's name (or DOMI_MACHINE; default: host name)",
    )
    parser.add_argument("--headless", action="store_true", help="run the scheduler with no GUI")
    return parser


GLOBAL_WITH_VALUE = ("--data-dir", "--store", "--machine")
GLOBAL_FLAGS = ("--headless", "--version")


def build_parser(only: str | None = None) -> _Parser:
    """The whole grammar, or with ``only`` the global options and that one command."""
    parser = _top()
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in COMMANDS.items():
        if only is None or name == only:
            add(subcommands)
    return parser


def parse(words: list[str]) -> argparse.Namespace:
    """``words`` parsed as the whole grammar would, building only the command they name.

    Given one command's parser, argparse reads the global options and that command exactly as it
    would with every command there: ``named_command`` skips the global options as argparse does,
    so the command it names is the word argparse takes for the command. Its refusals read the
    same too, as the usage line says ``COMMAND``, not the list. Help before the command (which
    lists them), a word that is no command, anything unsure: the whole grammar.
    """
    return build_parser(named_command(words)).parse_args(words)


def named_command(words: list[str]) -> str | None:
    """The command ``words`` name after global options (``""``: global options only), or None
    when a word is neither (``-h``, an abbreviation, a typo): that is for the whole grammar."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in COMMANDS:
            return word
        if word in GLOBAL_WITH_VALUE:
            index += 2
        elif word in GLOBAL_FLAGS or word.partition("=")[0] in GLOBAL_WITH_VALUE:
            index += 1
        else:
            return None
    return ""


def handler_of(args: argparse.Namespace) -> Handler | None:
    """The function the command's ``handler`` names, imported now; None for no command."""
    name: str | None = getattr(args, "handler", None)
    if name is None:
        return None
    module, _, function = name.rpartition(".")
    handler: Handler = getattr(_command_module(module), function)
    return handler


def _command_module(name: str) -> ModuleType:
    # Each import written out rather than importlib.import_module: PyInstaller puts in the bundle
    # the modules it sees imported, and these are otherwise imported by name only.
    if name == "app_commands":
        from domi_desktop.cli import app_commands

        return app_commands
    if name == "commands":
        from domi_desktop.cli import commands

        return commands
    if name == "schedules":
        from domi_desktop.cli import schedules

        return schedules
    if name == "transfer":
        from domi_desktop.cli import transfer

        return transfer
    if name == "store_cmd":
        from domi_desktop.cli import store_cmd

        return store_cmd
    if name == "timeline":
        from domi_desktop.cli import timeline

        return timeline
    if name == "holds":
        from domi_desktop.cli import holds

        return holds
    if name == "monitor_cmd":
        from domi_desktop.cli import monitor_cmd

        return monitor_cmd
    raise LookupError(f"no command module {name!r}")


def _preview(subcommands: Subcommands) -> None:
    preview = subcommands.add_parser(
        "preview", help="show what an expression means and when it fires next (no DB needed)"
    )
    preview.add_argument("expr", metavar="EXPR", help="a cron expression, quoted")
    preview.add_argument("--tz", default="local", help="IANA zone name or 'local' (default)")
    preview.add_argument(
        "-n", type=int, default=10, metavar="N", help="how many fires (default 10)"
    )
    preview.add_argument("--after", metavar="ISO8601", help="start instead of now")
    preview.add_argument(
        "--window", metavar="HH:MM-HH:MM", help="also list the next windows its runs start in"
    )
    preview.add_argument("--lang", choices=("en", "zh"), default="en")
    preview.add_argument("--json", action="store_true", help="one JSON object for scripts")
    preview.set_defaults(handler="commands.preview")


def _simulate(subcommands: Subcommands) -> None:
    simulate = subcommands.add_parser(
        "simulate", help="what the scheduler does at each wake (the real decision; no DB)"
    )
    simulate.add_argument("expr", metavar="EXPR")
    simulate.add_argument("--tz", default="local")
    simulate.add_argument("--last-due", required=True, metavar="ISO", help="the last fire's due")
    simulate.add_argument(
        "--wake", required=True, action="append", metavar="ISO", help="a wake (repeat, in order)"
    )
    simulate.add_argument(
        "--wake-to-run",
        action="store_true",
        help="also say when the machine would be woken to run it (a schedule's --wake)",
    )
    away = simulate.add_argument_group("what the job waits for, away until a moment")
    away.add_argument("--volume", metavar="LABEL|UUID=…")
    away.add_argument("--network-name", metavar="SSID|ethernet")
    away.add_argument("--path-exists", metavar="PATH")
    away.add_argument("--wait-at-most", type=float, metavar="SEC")
    away.add_argument("--on-deadline", choices=("run", "skip"), default="run")
    away.add_argument("--away-until", metavar="ISO", help="when it comes (default: never)")
    simulate.add_argument("--json", action="store_true")
    simulate.set_defaults(handler="commands.simulate")


def _schedule(subcommands: Subcommands) -> None:
    schedule = subcommands.add_parser("schedule", help="add, list, show, edit, remove schedules")
    actions = schedule.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="add a schedule: ... -- COMMAND [ARG...] or --http URL",
        usage="%(prog)s NAME (--cron EXPR | --at TIME) [options] -- COMMAND [ARG...]",
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("--cron", metavar="EXPR")
    add_job_options(add, editing=False)
    add.set_defaults(handler=TAKES_COMMAND[0])
    listing = actions.add_parser("list", help="all schedules with their next fire")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler="schedules.list_schedules")
    show = actions.add_parser("show", help="one schedule in full")
    show.add_argument("id", type=int, metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler="schedules.show_schedule")
    edit = actions.add_parser("edit", help="change a schedule (a new time or zone restarts it now)")
    edit.add_argument("id", type=int, metavar="ID")
    edit.add_argument("--name")
    edit.add_argument("--cron", metavar="EXPR")
    add_job_options(edit, editing=True)
    edit.set_defaults(handler=TAKES_COMMAND[1])
    for verb, handler, text in (
        ("rm", "schedules.remove_schedule", "remove a schedule and its history"),
        (
            "enable",
            "schedules.enable_schedule",
            "enable (nothing fires for the time it was disabled)",
        ),
        ("disable", "schedules.disable_schedule", "disable: it stops firing"),
    ):
        sub = actions.add_parser(verb, help=text)
        sub.add_argument("id", type=int, metavar="ID")
        sub.add_argument("--json", action="store_true")
        sub.set_defaults(handler=handler)
    _hold_commands(actions)


def _hold_commands(actions: Subcommands) -> None:
    """``schedule skip ID`` and ``schedule snooze ID SPAN``, each with ``--undo``."""
    skip = actions.add_parser(
        "skip", help="skip the schedule's next run (--undo: run it after all)"
    )
    skip.add_argument("id", type=int, metavar="ID")
    skip.add_argument("--undo", action="store_true", help="forget the skip")
    skip.add_argument("--json", action="store_true")
    skip.set_defaults(handler="holds.skip_schedule")
    snooze = actions.add_parser(
        "snooze", help="run the next run later by SPAN (10m, 1h, 2d); it is recorded late"
    )
    snooze.add_argument("id", type=int, metavar="ID")
    snooze.add_argument("span", nargs="?", metavar="SPAN")
    snooze.add_argument("--undo", action="store_true", help="forget the snooze")
    snooze.add_argument("--json", action="store_true")
    snooze.set_defaults(handler="holds.snooze_schedule")


def _timeline(subcommands: Subcommands) -> None:
    timeline = subcommands.add_parser(
        "timeline", help="this machine's sleeps and every due, and why each ran or not"
    )
    timeline.add_argument("--schedule", type=int, metavar="ID")
    timeline.add_argument("--days", type=int, default=7, metavar="N", help="how far back (7)")
    timeline.add_argument("--json", action="store_true")
    timeline.set_defaults(handler="timeline.timeline")


def _runs(subcommands: Subcommands) -> None:
    runs = subcommands.add_parser("runs", help="the history of runs, newest first")
    runs.add_argument("--schedule", type=int, metavar="ID")
    runs.add_argument("--status", metavar="S", help="running, succeeded, failed, timed_out, ...")
    runs.add_argument("--limit", type=int, default=20, metavar="N")
    runs.add_argument("--json", action="store_true")
    runs.set_defaults(handler="commands.runs")


def _run_now(subcommands: Subcommands) -> None:
    run_now = subcommands.add_parser("run-now", help="run a schedule's action now (trigger manual)")
    run_now.add_argument("id", type=int, metavar="ID")
    run_now.add_argument("--json", action="store_true")
    run_now.set_defaults(handler="commands.run_now")


def _secret(subcommands: Subcommands) -> None:
    secret = subcommands.add_parser("secret", help="secrets in the OS keyring (names only shown)")
    secret_actions = secret.add_subparsers(dest="action", metavar="ACTION", required=True)
    secret_set = secret_actions.add_parser(
        "set", help="store a secret: value from stdin or a prompt"
    )
    secret_set.add_argument("name", metavar="NAME")
    secret_set.set_defaults(handler="commands.secret_set")
    secret_list = secret_actions.add_parser("list", help="the names of the stored secrets")
    secret_list.add_argument("--json", action="store_true")
    secret_list.set_defaults(handler="commands.secret_list")
    secret_rm = secret_actions.add_parser("rm", help="delete a secret")
    secret_rm.add_argument("name", metavar="NAME")
    secret_rm.set_defaults(handler="commands.secret_rm")


def _status(subcommands: Subcommands) -> None:
    status = subcommands.add_parser("status", help="is the app running, its last and next wake")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler="app_commands.status")


def _quit(subcommands: Subcommands) -> None:
    quit_ = subcommands.add_parser("quit", help="ask the running app to stop")
    quit_.set_defaults(handler="app_commands.quit")


def _conditions(subcommands: Subcommands) -> None:
    conditions = subcommands.add_parser(
        "conditions", help="the network and power state jobs' conditions see (JSON)"
    )
    conditions.add_argument("--follow", action="store_true", help="print each change until Ctrl-C")
    conditions.set_defaults(handler="app_commands.conditions")


def _events(subcommands: Subcommands) -> None:
    events = subcommands.add_parser("events", help="print the app's events as JSON lines")
    events.add_argument("--follow", action="store_true", help="keep printing until Ctrl-C")
    events.set_defaults(handler="app_commands.events")


def _import_crontab(subcommands: Subcommands) -> None:
    crontab = subcommands.add_parser("import-crontab", help="import the entries of a crontab file")
    crontab.add_argument("file", metavar="FILE", help="a crontab file, or - for stdin")
    crontab.add_argument("--system", action="store_true", help="system format: a user column")
    crontab.add_argument("--dry-run", action="store_true", help="show what would be imported")
    crontab.add_argument("--disabled", action="store_true", help="import them disabled")
    crontab.add_argument("--tz", default="local", help="zone of the entries (CRON_TZ wins)")
    crontab.add_argument(
        "--encoding",
        metavar="ENC",
        help="the file's encoding when it is not UTF-8 (e.g. latin-1); the lines it changes are listed",
    )
    crontab.add_argument("--json", action="store_true")
    crontab.set_defaults(handler="schedules.import_crontab")


def _export(subcommands: Subcommands) -> None:
    from domi_desktop.cli.transfer import TARGETS

    export = subcommands.add_parser(
        "export",
        help="schedules as JSON (secrets by name), or one as systemd/launchd/crontab/k8s/Windows",
    )
    export.add_argument("ids", type=int, nargs="*", metavar="ID", help="default: all (JSON)")
    export.add_argument("--to", choices=TARGETS, default="json")
    export.add_argument(
        "-o", "--output", metavar="PATH", type=text_path, help="a file (JSON) or a folder"
    )
    export.add_argument(
        "--lossy", action="store_true", help="drop what the target cannot express, and list it"
    )
    export.add_argument("--system", action="store_true", help="systemd: a system unit")
    export.add_argument("--local-zone", metavar="ZONE", help="the zone 'local' means there")
    export.set_defaults(handler="transfer.export")


def _import(subcommands: Subcommands) -> None:
    import_ = subcommands.add_parser("import", help="create the schedules of an export file")
    import_.add_argument("file", metavar="FILE", help="a JSON export, or - for stdin")
    import_.add_argument("--dry-run", action="store_true", help="check only")
    import_.add_argument("--disabled", action="store_true", help="import them disabled")
    import_.add_argument("--json", action="store_true")
    import_.set_defaults(handler="transfer.import_")


def _store(subcommands: Subcommands) -> None:
    store = subcommands.add_parser("store", help="the store itself: copy it to or from PostgreSQL")
    actions = store.add_subparsers(dest="store_action", metavar="ACTION", required=True)
    migrate_ = actions.add_parser(
        "migrate",
        help="copy schedules, history and last_due into another store (postgresql://… or sqlite)",
    )
    migrate_.add_argument("--to", dest="target", metavar="URL", help="copy into this store")
    migrate_.add_argument("--from", dest="source", metavar="URL", help="copy from this store")
    migrate_.add_argument(
        "--force", action="store_true", help="replace what the target holds (refused otherwise)"
    )
    migrate_.set_defaults(handler="store_cmd.migrate")
    restore = actions.add_parser(
        "restore",
        help="put a backup of the database back (safe while the app runs; the current one is "
        "kept aside)",
    )
    restore.add_argument("file", metavar="FILE", help="the backup: a copy of domi.sqlite3")
    restore.set_defaults(handler="store_cmd.restore")


COMMANDS: dict[str, Callable[[Subcommands], None]] = {
    "preview": _preview,
    "simulate": _simulate,
    "schedule": _schedule,
    "runs": _runs,
    "timeline": _timeline,
    "monitor": add_monitor_command,
    "run-now": _run_now,
    "secret": _secret,
    "status": _status,
    "quit": _quit,
    "events": _events,
    "conditions": _conditions,
    "import-crontab": _import_crontab,
    "export": _export,
    "import": _import,
    "store": _store,
}
"""Every command in the order ``--help`` lists them, with what adds its parser."""

TAKES_COMMAND = ("schedules.add_schedule", "schedules.edit_schedule")
"""The handlers of the commands that take ``-- COMMAND [ARG...]``."""
