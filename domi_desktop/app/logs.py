"""The app's log: a rotating file next to the database, and stderr when there is one."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from domi_desktop.events import Event, FireEvent, RunFinished
from domi_desktop.model import WakeReason
from domi_desktop.scheduler.decide import WakePlan

log = logging.getLogger("domi_desktop")


def setup_logging(data_dir: Path) -> None:
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    file = LogFile(data_dir / "domi-desktop.log")
    handlers: list[logging.Handler] = [file]
    # A windowed Windows build has no stderr at all (sys.stderr is None): the file is the log.
    if sys.stderr is not None:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(formatter)
    root.handlers[:] = handlers
    root.setLevel(logging.INFO)


class LogFile(logging.handlers.RotatingFileHandler):
    """The log file. One that cannot be written (a full disk, a removed folder) is said in one
    line on stderr when it starts and when it ends: logging's default prints a traceback for
    every record, which buries the log that still reaches stderr."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
        self.failing = False
        self._failed = False

    def emit(self, record: logging.LogRecord) -> None:
        self._failed = False
        super().emit(record)
        if self.failing and not self._failed:
            self.failing = False
            _notice(f"writing the log {self.baseFilename} again")

    def handleError(self, record: logging.LogRecord) -> None:
        self._failed = True
        if not self.failing:
            self.failing = True
            error = sys.exc_info()[1]
            _notice(f"cannot write the log {self.baseFilename} ({error}); stderr only until it can")


def _notice(text: str) -> None:
    if sys.stderr is not None:
        print(f"domi-desktop: {text}", file=sys.stderr, flush=True)


def log_wake(plan: WakePlan, reason: WakeReason) -> None:
    log.info(
        "wake (%s) at %s: %d fire(s), next wake %s",
        reason,
        plan.now.isoformat(timespec="seconds"),
        len(plan.fires),
        plan.next_wake.isoformat(timespec="seconds"),
    )
    for schedule_id, problem in plan.errors:
        log.warning("schedule %s cannot be evaluated: %s", schedule_id, problem)


def log_event(event: Event) -> None:
    if isinstance(event, FireEvent):
        kind = f"skipped ({event.skipped.value})" if event.skipped else "fire"
        log.info(
            "%s: schedule %s %r run %s due %s trigger %s%s%s",
            kind,
            event.schedule_id,
            event.name,
            event.run_id,
            event.due.isoformat() if event.due else None,
            event.trigger.value,
            " LATE" if event.late else "",
            f", {event.missed_count} missed" if event.missed_count else "",
        )
    elif isinstance(event, RunFinished):
        log.info(
            "finished: run %s of %r %s%s in %.1fs",
            event.run_id,
            event.name,
            event.status.value,
            f" ({event.reason})" if event.reason else "",
            event.duration.total_seconds(),
        )
