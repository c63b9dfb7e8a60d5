"""``schedule add|edit`` options: the job, its policies, its conditions, where it runs."""

from __future__ import annotations

import argparse

from domi_desktop.cli.monitor_options import add_monitor_options


def add_job_options(parser: argparse.ArgumentParser, *, editing: bool) -> None:
    """What a job is and how it runs, for ``schedule add`` and ``schedule edit`` (where each
    option given changes only itself)."""
    parser.add_argument("--tz", help="IANA zone or 'local'" + ("" if editing else " (default)"))
    parser.add_argument(
        "--at",
        metavar="TIME",
        help="run once, at this date and time (2026-12-24T07:00, read in --tz), instead of --cron",
    )
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
    parser.add_argument(
        "--notes",
        metavar="TEXT",
        help="your notes on the schedule: why it exists, whom to call"
        + (" ('' clears them)" if editing else ""),
    )
    _condition_options(parser)
    _placement_options(parser)
    add_monitor_options(parser)
    wake = parser.add_mutually_exclusive_group()
    wake.add_argument(
        "--wake",
        dest="wake_to_run",
        action="store_const",
        const=True,
        help="wake the computer from sleep to run it (then let it sleep again)",
    )
    wake.add_argument("--no-wake", dest="wake_to_run", action="store_const", const=False)
    parser.add_argument(
        "--background",
        action=argparse.BooleanOptionalAction,
        help="run it with the lowest CPU and disk priority (its whole process tree)",
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(command=[])


def _condition_options(parser: argparse.ArgumentParser) -> None:
    """Conditions and alerts: each given one changes only itself on ``edit``."""
    group = parser.add_argument_group("conditions and alerts")
    network = group.add_mutually_exclusive_group()
    network.add_argument(
        "--requires-network",
        dest="requires_network",
        action="store_const",
        const=True,
        help="wait for the network (HTTP jobs do by default)",
    )
    network.add_argument(
        "--no-network",
        dest="requires_network",
        action="store_const",
        const=False,
        help="do not wait for the network, even for HTTP",
    )
    group.add_argument("--unmetered-only", action="store_const", const=True)
    group.add_argument(
        "--metered-after",
        type=float,
        metavar="DAYS",
        help="with --unmetered-only: metered is fine after DAYS without a success",
    )
    group.add_argument("--on-ac-power", action="store_const", const=True)
    group.add_argument("--min-battery", type=int, metavar="PCT")
    group.add_argument("--wait-at-most", type=float, metavar="SEC")
    group.add_argument("--on-deadline", choices=("run", "skip"))
    group.add_argument("--stop-if-lost", action="store_const", const=True)
    group.add_argument("--keep-awake", action="store_const", const=True)
    group.add_argument(
        "--volume",
        metavar="LABEL|UUID=…",
        help="wait for this disk to be mounted; the job finds it at $DOMI_VOLUME_PATH ('' none)",
    )
    group.add_argument("--network-name", metavar="SSID|ethernet", help="wait for this network")
    group.add_argument("--path-exists", metavar="PATH", help="wait until PATH exists")
    group.add_argument(
        "--window",
        metavar="HH:MM-HH:MM",
        help="start only within these hours, once per period of the cron expression"
        " (22:00-06:00 crosses midnight; '' none)",
    )
    group.add_argument(
        "--when-away",
        type=float,
        metavar="MIN",
        help="start only once nobody has touched the computer for MIN minutes",
    )
    group.add_argument(
        "--on-return",
        choices=("pause", "stop", "continue"),
        help="when you come back while it runs: pause it until you step away again (default),"
        " stop it (it runs once more then), or let it go on",
    )
    group.add_argument(
        "--at-window-end",
        choices=("skip", "run"),
        help="when the window ends unused: skip the run (default) or run it then",
    )
    session = parser.add_argument_group("session triggers: run also at these moments")
    for flag in ("--at-login", "--at-unlock", "--on-resume", "--before-sleep"):
        session.add_argument(flag, action=argparse.BooleanOptionalAction)
    session.add_argument(
        "--min-interval", type=float, metavar="SEC", help="at most once per SEC by a trigger"
    )
    group.add_argument("--notify-every", type=int, metavar="N")
    group.add_argument("--auto-pause-after", type=int, metavar="K")
    group.add_argument("--stale-after", type=float, metavar="SEC")


def _placement_options(parser: argparse.ArgumentParser) -> None:
    """Where the schedule may run when machines share a store (``--store postgresql://…``)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--run-on",
        action="append",
        metavar="MACHINE",
        help="run only on this machine (repeat for several)",
    )
    where.add_argument(
        "--first-awake",
        dest="placement",
        action="store_const",
        const="first_awake",
        help="the first machine awake runs it",
    )
    where.add_argument(
        "--run-anywhere",
        dest="placement",
        action="store_const",
        const="anywhere",
        help="any machine runs it (the default)",
    )
