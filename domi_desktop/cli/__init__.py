"""The ``domi-desktop`` command: argparse front door. Heavy imports happen inside the commands.

Schedule commands go through one backend: the running app over its socket when one runs (it
sees edits at once), else the store opened directly. Both end in ``frontdoor.service.METHODS``.

Only the named command's parser is built and only its module imported (``cli.parser``):
``status`` with no app running loads argparse, ``app_commands`` and ``app.instance``.
"""

from __future__ import annotations

import os
import sys

from domi_desktop.cli.exits import EXIT_READER_GONE, EXIT_USAGE
from domi_desktop.cli.parser import TAKES_COMMAND, build_parser, handler_of, parse
from domi_desktop.errors import CronError, DomiError

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing, 2 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

ZONE_FREE = ("app_commands.status", "app_commands.quit", "app_commands.events")
"""Commands that show no instant in a zone: they load neither tzlocal nor the cron engine (the
time ``status`` takes with no app running is mostly imports)."""


def _utf8_when_redirected() -> None:
    """Windows writes a pipe or a file in the ANSI code page, which cannot say most names and
    notes (``schedule show --json`` died with UnicodeEncodeError): there, UTF-8, as JSON is; a
    console keeps Python's own Unicode path."""
    import io

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not stream.isatty():
            stream.reconfigure(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    if sys.platform == "win32":
        _utf8_when_redirected()
    try:
        try:
            return _run(argv)
        finally:
            # Written now, while a reader gone away (``| head -1``) can still be caught below.
            sys.stdout.flush()
    except BrokenPipeError:
        # As the Python documentation's note on SIGPIPE does: the rest goes nowhere, and the
        # flush at exit finds nothing to fail on.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_READER_GONE


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first '--' is the job's command, options and all (argparse's
    # REMAINDER would also swallow our own options given after the schedule's name).
    command: list[str] = []
    if "--" in words:
        split = words.index("--")
        words, command = words[:split], words[split + 1 :]
    args = parse(words)
    if command:
        if getattr(args, "handler", None) not in TAKES_COMMAND:
            build_parser().error("'-- COMMAND' is only for 'schedule add' and 'schedule edit'")
        args.command = command
    if getattr(args, "handler", None) not in ZONE_FREE:
        from domi_desktop.platform.timezone import install_os_zone

        install_os_zone()
    try:
        if args.store is not None or args.machine is not None:
            from domi_desktop.cli.store_cmd import apply_globals

            apply_globals(args)
        handler = handler_of(args)
        if handler is None:
            from domi_desktop.cli.commands import start_app

            return start_app(args)
        return handler(args)
    except CronError as error:
        from domi_desktop.cli.render import print_cron_error

        print_cron_error(error, sys.stderr)
        return EXIT_USAGE
    except DomiError as error:
        print(f"domi-desktop: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
