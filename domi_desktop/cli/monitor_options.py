"""``schedule add|edit`` options for outside monitors: Healthchecks and a webhook."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing: the CLI's fast path must not
if TYPE_CHECKING:
    from typing import Any

_OPTIONS = {
    "healthchecks": "healthchecks_url",
    "healthchecks_key": "healthchecks_key",
    "healthchecks_api": "healthchecks_api",
    "webhook": "webhook",
}


def add_monitor_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "monitoring: tell Healthchecks (or any webhook) of each run ('' removes one)"
    )
    group.add_argument("--healthchecks", metavar="PING_URL", help="ping this check's URL")
    group.add_argument(
        "--healthchecks-key",
        metavar="SECRET",
        help="the secret holding a project API key (domi-desktop secret set SECRET): domi makes "
        "the check from the schedule and pauses it while the machine sleeps",
    )
    group.add_argument(
        "--healthchecks-api", metavar="URL", help="a self-hosted Healthchecks (default: hosted)"
    )
    group.add_argument(
        "--monitor-grace", type=float, metavar="MIN", help="minutes a ping may be late (30)"
    )
    group.add_argument("--webhook", metavar="URL", help="POST JSON at start, success, failure")


def monitor_params(args: argparse.Namespace) -> dict[str, Any]:
    """``policies.monitor`` with only the options given; an empty value clears one."""
    monitor: dict[str, Any] = {
        field: getattr(args, option) or None
        for option, field in _OPTIONS.items()
        if getattr(args, option, None) is not None
    }
    if getattr(args, "monitor_grace", None) is not None:
        monitor["grace"] = args.monitor_grace * 60
    if monitor.get("healthchecks_url") and "healthchecks_key" not in monitor:
        monitor["healthchecks_key"] = None  # a ping URL given replaces a key
    if monitor.get("healthchecks_key") and "healthchecks_url" not in monitor:
        monitor["healthchecks_url"] = None
    return {"monitor": monitor} if monitor else {}


def add_monitor_command(subcommands: Any) -> None:
    command = subcommands.add_parser(
        "monitor", help="what this machine tells its monitors: pings waiting, checks, heartbeat"
    )
    command.add_argument("--json", action="store_true")
    command.set_defaults(handler="monitor_cmd.monitor")
