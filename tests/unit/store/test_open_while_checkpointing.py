"""Opening while another process checkpoints: the header already counts the pages the
checkpoint is still writing, so for a moment the file is shorter than its header says. That is
not damage; the open must not refuse the database for it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from domi_desktop.errors import StoreError
from domi_desktop.store import _open

BACKENDS = ("sqlite",)

WRITER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA wal_autocheckpoint = 0")
end = time.monotonic() + float(sys.argv[2])
print("ready", flush=True)
while time.monotonic() < end:
    db.execute("BEGIN")
    db.executemany("INSERT INTO filler VALUES (?)", [(b"x" * 3000,)] * 200)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
"""


def test_a_checkpoint_in_progress_is_not_taken_for_a_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "domi.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE filler (body BLOB)")
        db.commit()
    refused, looks = 0, 0
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "4"], stdout=subprocess.PIPE, text=True
    ) as writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        while writer.poll() is None:
            looks += 1
            try:
                _open.refuse_unusable_file(path)
            except StoreError as error:
                assert "truncated" in str(error)
                refused += 1
            time.sleep(0.0005)
    assert looks > 100
    assert refused == 0, f"{refused} of {looks} looks called a database mid-checkpoint truncated"
