"""The pings not yet delivered, in order, in an append-only journal per machine in the data dir.

A monitor that cannot be reached must not cost a result: every intent is written here before it is
sent, and a line saying it is done is added once the monitor took it (or refused it for good). So
draining a spool of thousands costs one short append a ping, not a rewrite of the whole list.
Each line is one JSON object: ``{"n": 12, "add": {...}}`` or ``{"n": 12, "done": true}``. A line
cut short by a crash is skipped when read. The journal is rewritten (to a temporary file, synced,
renamed over) only when most of it is done lines, so it stays about as large as what waits.

Additions are synced to the disk before anything is sent: a power cut must not lose a result.
Done lines are not: a power cut then sends a few pings twice, which a monitor takes in its stride.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from domi_desktop.monitor.intents import Intent
from domi_desktop.paths import ensure_private_dir

log = logging.getLogger(__name__)

SPOOL_FILENAME = "monitor-spool.jsonl"
LEGACY_FILENAME = "monitor-spool.json"
"""The whole list as one JSON array, as earlier releases kept it: read once, then journaled."""
MAX_ITEMS = 10_000
"""Past this, the oldest pings go (each said in the log): a monitor away for months must not
fill the disk, and what matters most is the latest."""
COMPACT_AFTER = 1_000
"""Done lines tolerated before the journal may be rewritten (also more than what waits)."""


class Spool:
    """Reading it is all ``Spool(path)`` does (the ``monitor`` command reads a live one); the
    first change makes it the journal's writer. Written by one thread (the monitor's worker)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._legacy = path.with_name(LEGACY_FILENAME)
        self._waiting: dict[int, Intent] = {}
        """By number, in the order added."""
        self._next = 1
        self._dead = 0
        """Lines in the journal for intents no longer waiting (their add and done lines)."""
        self._file: IO[str] | None = None
        self._migrated = False
        self._read_journal()
        self._read_legacy()

    @property
    def items(self) -> list[Intent]:
        return list(self._waiting.values())

    def waiting(self) -> list[tuple[int, Intent]]:
        return list(self._waiting.items())

    def __len__(self) -> int:
        return len(self._waiting)

    # -- reading -------------------------------------------------------------------------------

    def _read_journal(self) -> None:
        try:
            with self.path.open(encoding="utf-8", errors="replace") as file:
                lines = list(file)
        except FileNotFoundError:
            return
        except OSError as error:
            log.warning("cannot read the monitor spool %s (%s): starting empty", self.path, error)
            return
        damaged = 0
        for line in lines:
            try:
                entry = json.loads(line)
                number = entry["n"]
                if not isinstance(number, int):
                    raise TypeError("a line without its number")
                self._next = max(self._next, number + 1)
                if "add" in entry:
                    self._waiting[number] = Intent.from_json(entry["add"])
                elif self._waiting.pop(number, None) is not None:
                    self._dead += 2
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                damaged += 1  # cut short by a crash, or edited by hand: the rest still counts
        if damaged:
            log.warning("the monitor spool %s: %s damaged line(s) skipped", self.path, damaged)

    def _read_legacy(self) -> None:
        try:
            text = self._legacy.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as error:
            log.warning("cannot read the monitor spool %s (%s)", self._legacy, error)
            return
        try:
            entries = json.loads(text)
        except (ValueError, RecursionError) as error:
            log.warning("the monitor spool %s is damaged (%s)", self._legacy, error)
            entries = []
        for entry in entries if isinstance(entries, list) else [entries]:
            try:
                self._waiting[self._next] = Intent.from_json(entry)
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                log.warning("the monitor spool %s: an entry is damaged (%s)", self._legacy, error)
            else:
                self._next += 1

    # -- writing -------------------------------------------------------------------------------

    def add(self, intents: Iterable[Intent]) -> list[tuple[int, Intent]]:
        """Keep ``intents`` (synced to the disk); each with its number, for ``done``."""
        added = []
        for intent in intents:
            added.append((self._next, intent))
            self._waiting[self._next] = intent
            self._next += 1
        self._append([{"n": n, "add": intent.to_json()} for n, intent in added], sync=True)
        excess = len(self._waiting) - MAX_ITEMS
        if excess > 0:
            log.warning("the monitor spool is full: the %s oldest pings are dropped", excess)
            oldest = list(self._waiting)[:excess]
            self.done(oldest)
            dropped = set(oldest)
            added = [(n, intent) for n, intent in added if n not in dropped]
        return added

    def done(self, numbers: Iterable[int]) -> None:
        """These are delivered, refused for good, or not wanted any more."""
        gone = [n for n in numbers if self._waiting.pop(n, None) is not None]
        if not gone:
            return
        self._dead += 2 * len(gone)
        if self._dead >= COMPACT_AFTER and self._dead > 2 * len(self._waiting):
            self._compact()
        else:
            self._append([{"n": n, "done": True} for n in gone], sync=False)

    def drop(self, unwanted: Callable[[Intent], bool]) -> list[int]:
        """Remove the intents ``unwanted`` says; their numbers."""
        gone = [n for n, intent in self._waiting.items() if unwanted(intent)]
        self.done(gone)
        return gone

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _append(self, entries: list[dict[str, Any]], *, sync: bool) -> None:
        if not entries:
            return
        if not self._migrated:
            self._migrated = True
            if self._legacy.exists():
                # An earlier release's list: the journal is made from what waits (these
                # entries included), and the list goes.
                if self._compact():
                    self._legacy.unlink(missing_ok=True)
                return
        try:
            if self._file is None:
                ensure_private_dir(self.path.parent)
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                self._file = os.fdopen(descriptor, "a", encoding="utf-8")
            self._file.write("".join(_line(entry) for entry in entries))
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())
        except OSError as error:
            # Kept in memory: delivered all the same while the app runs.
            log.warning("cannot write the monitor spool %s: %s", self.path, error)

    def _compact(self) -> bool:
        """The journal rewritten with what waits only, in one step (write, sync, rename)."""
        self.close()
        ensure_private_dir(self.path.parent)
        lines = "".join(_line({"n": n, "add": i.to_json()}) for n, i in self._waiting.items())
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(lines)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            log.warning("cannot write the monitor spool %s: %s", self.path, error)
            return False
        self._dead = 0
        return True


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
