"""Another process holding a SQLite file's write lock, as backup tools, sync clients and a second
``domi-desktop`` CLI do on real laptops: ``BEGIN IMMEDIATE`` in a separate ``sqlite3`` process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLD = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
then = sys.stdin.readline().strip()
if then:
    connection.execute(then)
    connection.execute("COMMIT")
else:
    connection.execute("ROLLBACK")
"""


class WriteLock:
    """A write lock on ``path`` held by another process until ``release``."""

    def __init__(self, path: Path) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _HOLD, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if line.strip() != "locked":
            self._process.kill()
            raise AssertionError(f"the lock holder did not take the lock: {line!r}")

    def release(self, then: str = "") -> None:
        """Let the lock go; with ``then`` (one line of SQL) that is done and committed first, as
        another program's change to the file."""
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            if process.poll() is None:
                process.stdin.write(then + "\n")
                process.stdin.flush()
                process.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        finally:
            process.stdin.close()
            process.stdout.close()


@contextmanager
def write_lock(path: Path) -> Iterator[WriteLock]:
    lock = WriteLock(path)
    try:
        yield lock
    finally:
        lock.release()
