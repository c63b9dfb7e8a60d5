"""The ``domi-desktop`` command: argparse front door. Heavy imports happen inside the commands.

Schedule commands go through one backend: the running app over its socket when one runs (it
sees edits at once), else the store opened directly. Both end in ``api.service.METHODS``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from domi_desktop.cli import commands, schedules, store_cmd
from domi_desktop.cli.parser import Handler, build_parser
from domi_desktop.cli.render import EXIT_USAGE, print_cron_error
from domi_desktop.errors import CronError, DomiError

__all__ = ["main"]

ZONE_FREE = (commands.status, commands.quit, commands.events)
"""Commands that show no instant in a zone: they load neither tzlocal nor the cron engine (the
time ``status`` takes with no app running is mostly imports)."""


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
        if getattr(args, "handler", None) not in (schedules.add_schedule, schedules.edit_schedule):
            parser.error("'-- COMMAND' is only for 'schedule add' and 'schedule edit'")
        args.command = command
    handler: Handler | None = getattr(args, "handler", None)
    if handler not in ZONE_FREE:
        from domi_desktop.platform.timezone import install_os_zone

        install_os_zone()
    try:
        store_cmd.apply_globals(args)
        if handler is None:
            return commands.start_app(args)
        return handler(args)
    except CronError as error:
        print_cron_error(error, sys.stderr)
        return EXIT_USAGE
    except DomiError as error:
        print(f"domi-desktop: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
