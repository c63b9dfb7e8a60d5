"""The OS's own log of sleeps, read by its own tool (parsed by ``story.oslog``), for the spans the
app missed: before its first start, while it was not running, a wake it did not hear.

- Linux: ``journalctl -o json`` matched on systemd-sleep's message ids (the journal's index
  answers at once however long the journal is). A user outside the ``systemd-journal``/``adm``
  groups sees only their own journal, which has no sleeps: nothing is found, nothing breaks.
- macOS: ``pmset -g log`` (a few days of power events).
- Windows: ``wevtutil qe System`` with an XPath query on Kernel-Power 42/107. wevtutil, not the
  Evt* API by ctypes: it is on every Windows since Vista, prints the events' own XML (what the
  parser's fixtures are), and runs once per start off the loop, where its process costs nothing
  that matters; the ctypes route would be a few hundred lines of handles and buffers for that.

Run off the loop thread (a worker): a tool may take a second on a long log.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path

from domi_desktop.story import Parsed, SpanSource
from domi_desktop.story.oslog import (
    EVENT_QUERY,
    SLEEP_START_ID,
    SLEEP_STOP_ID,
    parse_events_xml,
    parse_journal,
    parse_pmset,
)

log = logging.getLogger(__name__)

TIMEOUT = 30.0
MOST_EVENTS = 2000
"""Windows events read at most (the newest): two sleeps a day for years."""


def boot_clock(platform: str = sys.platform) -> Callable[[], float] | None:
    """Linux's ``CLOCK_BOOTTIME``: monotonic, but it runs on while the machine sleeps (the
    diary tells a sleep from a wall clock set forward by it); None elsewhere."""
    if sys.platform == "win32" or not platform.startswith("linux"):
        return None  # (the first test, for mypy: Windows' time module has no clock_gettime)
    if not hasattr(time, "CLOCK_BOOTTIME"):
        return None
    return partial(time.clock_gettime, time.CLOCK_BOOTTIME)


def journal_command(since: datetime, files: Sequence[Path] = ()) -> list[str]:
    """``journalctl`` for the sleeps since ``since`` (``files``: those journal files instead of
    the system's, for tests and for a journal copied from another machine)."""
    argv = ["journalctl", "-o", "json", "--no-pager", "-q", f"--since=@{int(since.timestamp())}"]
    argv += [f"--file={path}" for path in files]
    return [*argv, f"MESSAGE_ID={SLEEP_START_ID}", f"MESSAGE_ID={SLEEP_STOP_ID}"]


def event_log_command() -> list[str]:
    return [
        "wevtutil",
        "qe",
        "System",
        f"/q:{EVENT_QUERY}",
        "/f:xml",
        "/rd:true",
        f"/c:{MOST_EVENTS}",
    ]


def read_os_sleeps(
    since: datetime, *, platform: str = sys.platform, journal_files: Sequence[Path] = ()
) -> tuple[SpanSource, Parsed] | None:
    """The sleeps the OS logged since ``since``, and which log said so; None where this OS has
    no such log or its tool is absent."""
    if platform.startswith("linux"):
        argv, source, parse = (
            journal_command(since, journal_files),
            SpanSource.journal,
            parse_journal,
        )
    elif platform == "darwin":
        argv, source, parse = ["pmset", "-g", "log"], SpanSource.pmset, parse_pmset
    elif platform == "win32":
        argv, source, parse = event_log_command(), SpanSource.eventlog, parse_events_xml
    else:
        return None
    tool = shutil.which(argv[0])
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, *argv[1:]],
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return source, Parsed((), (f"{argv[0]} could not be read: {error}",))
    text = done.stdout.decode("utf-8", errors="replace")
    parsed = parse(text)
    notes = parsed.notes
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        notes = (*notes, f"{argv[0]} exited {done.returncode}: {said[0] if said else ''}")
    sleeps = tuple(sleep for sleep in parsed.sleeps if sleep.end >= since)
    return source, Parsed(sleeps, notes)
