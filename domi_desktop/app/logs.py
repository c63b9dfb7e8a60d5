"""The app's log: a rotating file next to the database, and stderr when there is one."""

from __future__ import annotations

import atexit
import contextlib
import logging
import logging.handlers
import queue
import sys
import threading
from pathlib import Path

from domi_desktop.events import Event, FireEvent, RunFinished
from domi_desktop.model import WakeReason
from domi_desktop.scheduler.decide import WakePlan

log = logging.getLogger("domi_desktop")


def setup_logging(data_dir: Path) -> None:
    """The records are written by a thread of their own, in batches: a wake of 10,000 schedules
    logs 20,000 lines, and the loop thread writing each one to the file held the GUI still (a
    flush and a rollover check a line, each a system call after which the loop waited for the GIL
    to come back); one write and one flush for all that came meanwhile do not."""
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    handlers: list[Batched] = [LogFile(data_dir / "domi-desktop.log")]
    # A windowed Windows build has no stderr at all (sys.stderr is None): the file is the log.
    if sys.stderr is not None:
        handlers.append(Batched(sys.stderr))
    for handler in handlers:
        handler.setFormatter(formatter)
    root = logging.getLogger()
    for previous in root.handlers:
        if isinstance(previous, _Handing):
            atexit.unregister(previous.writer.stop)
            previous.writer.stop()
    writer = LogWriter(handlers)
    root.handlers[:] = [_Handing(writer)]
    root.setLevel(logging.INFO)
    # Stopping writes what is still queued: the last lines of a run are the ones asked about.
    atexit.register(writer.stop)


class Batched(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream written a batch of records at a time (``write_all``)."""

    def write_all(self, records: list[logging.LogRecord]) -> None:
        records = [record for record in records if record.levelno >= self.level]
        if not records:
            return
        try:
            text = "".join(self.format(record) + self.terminator for record in records)
            with self.lock:  # type: ignore[union-attr]  # made by Handler.__init__
                self.write_text(text)
        except Exception:
            self.handleError(records[-1])

    def write_text(self, text: str) -> None:
        self.stream.write(text)
        self.flush()


class LogWriter:
    """The thread that writes the log: each batch is what was queued while the last one was
    written, up to ``BATCH`` records."""

    BATCH = 1000

    def __init__(self, handlers: list[Batched]) -> None:
        self._handlers = handlers
        self.records: queue.SimpleQueue[logging.LogRecord | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="domi-log", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.records.put(None)
        self._thread.join()
        for handler in self._handlers:
            # What a full disk kept in the stream's buffer is lost: said already, not raised.
            with contextlib.suppress(OSError, ValueError):
                handler.close()

    def _write(self) -> None:
        while True:
            batch = [self.records.get()]
            with contextlib.suppress(queue.Empty):
                while len(batch) < self.BATCH:
                    batch.append(self.records.get_nowait())
            records = [record for record in batch if record is not None]
            for handler in self._handlers:
                handler.write_all(records)
            if len(records) < len(batch):
                return


class _Handing(logging.handlers.QueueHandler):
    def __init__(self, writer: LogWriter) -> None:
        super().__init__(writer.records)
        self.writer = writer

    def handle(self, record: logging.LogRecord) -> bool:
        """As ``Handler.handle`` but without the handler's lock, which the queue does not need:
        with hundreds of job threads logging, the GUI thread waited 85 ms for that lock in a
        10,000-schedule wake, the thread holding it waiting its turn for the GIL."""
        kept = self.filter(record)
        if isinstance(kept, logging.LogRecord):
            record = kept
        if kept:
            self.emit(record)
        return bool(kept)


class LogFile(logging.handlers.RotatingFileHandler, Batched):
    """The log file. One that cannot be written (a full disk, a removed folder) is said in one
    line on stderr when it starts and when it ends: logging's default prints a traceback for
    every record, which buries the log that still reaches stderr."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
        self.failing = False
        self._failed = False

    def write_all(self, records: list[logging.LogRecord]) -> None:
        self._failed = False
        super().write_all(records)
        if self.failing and not self._failed:
            self.failing = False
            _notice(f"writing the log {self.baseFilename} again")

    def write_text(self, text: str) -> None:
        if self.stream is None:
            self.stream = self._open()
        # A batch that would pass the size starts the next file (RotatingFileHandler's rule,
        # asked once a batch, not with a seek at each record).
        size = self.stream.tell()
        if size and size + len(text) >= self.maxBytes:
            self.doRollover()
        super().write_text(text)

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
