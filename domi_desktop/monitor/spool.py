"""The pings not yet delivered, in order, in a small file per machine in the data dir.

A monitor that cannot be reached must not cost a result: every intent is written here before it is
sent and removed once the monitor took it (or refused it for good). The file is replaced in one
step (write, fsync, rename), so a crash leaves the old list or the new one, never half of one.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from domi_desktop.monitor.intents import Intent
from domi_desktop.paths import ensure_private_dir

log = logging.getLogger(__name__)

SPOOL_FILENAME = "monitor-spool.json"
MAX_ITEMS = 10_000
"""Past this, the oldest pings go (each said in the log): a monitor away for months must not
fill the disk, and what matters most is the latest."""


class Spool:
    """Used by one thread (the monitor's worker)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[Intent] = self._read()

    def _read(self) -> list[Intent]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as error:
            log.warning("cannot read the monitor spool %s (%s): starting empty", self.path, error)
            return []
        try:
            entries = json.loads(text)
        except ValueError as error:
            log.warning("the monitor spool %s is damaged (%s): starting empty", self.path, error)
            return []
        items: list[Intent] = []
        for entry in entries if isinstance(entries, list) else [entries]:
            try:
                items.append(Intent.from_json(entry))
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                log.warning("the monitor spool %s: an entry is damaged (%s)", self.path, error)
        return items

    def add(self, intents: list[Intent]) -> None:
        self.items.extend(intents)
        dropped = len(self.items) - MAX_ITEMS
        if dropped > 0:
            log.warning("the monitor spool is full: the %s oldest pings are dropped", dropped)
            del self.items[:dropped]
        self._write()

    def drop(self, unwanted: Callable[[Intent], bool]) -> int:
        """Remove the intents ``unwanted`` says; how many went."""
        kept = [item for item in self.items if not unwanted(item)]
        dropped = len(self.items) - len(kept)
        if dropped:
            self.items = kept
            self._write()
        return dropped

    def done(self, intent: Intent) -> None:
        if self.items and self.items[0] is intent:
            del self.items[0]
            self._write()

    def _write(self) -> None:
        ensure_private_dir(self.path.parent)
        text = json.dumps([item.to_json() for item in self.items], ensure_ascii=False)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            # Kept in memory: delivered all the same while the app runs.
            log.warning("cannot write the monitor spool %s: %s", self.path, error)
