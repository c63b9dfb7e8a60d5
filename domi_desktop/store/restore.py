"""A backup put back, and a copy over the live file told apart from SQLite's own writes.

``restore`` is ``domi-desktop store restore FILE``: the file is checked (a domi-desktop database,
migrated in a scratch copy when it is from an earlier release), the current database is kept aside
(``domi.sqlite3.before-restore-<time>``), and the backup goes in with SQLite's backup API: one
write transaction like any other, so a running app's connections see it at their next read,
nothing half done, and the app's write-ahead log never meets it.

A copy over the live file (``cp backup domi.sqlite3``: the same inode, so nothing the file's
identity says) is told by a stamp the running app puts in the database header's application id
(``stamp``): random at start, moved on with each schedule change. SQLite writes the main file only
when it checkpoints the log, and then with the stamp the app wrote; any other value there came
from elsewhere. ``restore`` carries the live stamp into what it restores.
"""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from domi_desktop.errors import StoreError
from domi_desktop.paths import DB_FILENAME, create_private_file, resolve_data_dir
from domi_desktop.store.migrations import CHANGES_KEY

APPLICATION_ID_AT = 68
"""The header's application id: 4 bytes, big-endian (https://sqlite.org/fileformat.html)."""
BUSY_MS = 30_000


@dataclass(frozen=True, slots=True)
class Restored:
    kept: Path
    """The database as it was, kept aside."""
    schedules: int


def restore(data_dir: str | Path | None, source: Path, *, now: datetime) -> Restored:
    """Put the backup ``source`` in place of the data dir's database; ``StoreError`` saying
    what is wrong with it (and nothing changed) when ``source`` cannot be used. The caller
    names ``source``: only it knows how to show a name to its reader."""
    from domi_desktop.store import Store

    directory = resolve_data_dir(data_dir)
    live = directory / DB_FILENAME
    try:
        found = source.is_file()
    except OSError as error:  # a name longer than the OS takes
        raise StoreError(error.strerror or str(error)) from None
    if not found:
        raise StoreError("no such file")
    if not live.exists():
        raise StoreError(f"nothing to restore into: {live} does not exist")
    with tempfile.TemporaryDirectory(dir=directory, prefix=".restore-") as scratch:
        checked = Path(scratch) / DB_FILENAME
        create_private_file(checked)
        try:
            with _connect(source, read_only=True) as backup, _connect(checked) as copy:
                backup.backup(copy)
        except sqlite3.Error as error:
            raise StoreError(f"not a database SQLite reads ({error})") from None
        # Checked and brought to this release's schema as the app would open it.
        with Store.open(scratch, now=now) as opened:
            schedules = opened.count_schedules()
        kept = directory / f"{DB_FILENAME}.before-restore-{now.strftime('%Y%m%dT%H%M%S')}"
        create_private_file(kept)
        with _connect(live) as current, _connect(kept) as aside:
            current.backup(aside)
            _one_file(aside)
            stamp, changes = _stamp_and_changes(current)
        with _connect(checked) as copy:
            # The running app's stamp and a change count it has not seen: its next look at the
            # file finds its own stamp, and its schedules changed.
            copy.execute(f"PRAGMA application_id = {stamp}")
            copy.execute("UPDATE meta SET value = ? WHERE key = ?", (str(changes + 1), CHANGES_KEY))
            copy.commit()
            with _connect(live) as target:
                copy.backup(target)
    return Restored(kept, schedules)


def application_id(path: Path) -> int | None:
    """The application id in the main file's header as it is on the disk (not through the
    log); None when it cannot be read.

    Read through SQLite (``immutable``: the main file alone, no lock, no log), never by
    opening the file ourselves: closing any descriptor of a file drops every POSIX lock this
    process holds on it, and the app's own connections went on with a stale cache."""
    try:
        with _connect(path, immutable=True) as main:
            return int(main.execute("PRAGMA application_id").fetchone()[0])
    except sqlite3.Error:
        return None


def keep_copy(live: Path, now: datetime) -> Path:
    """The main file as it is on the disk now (the log left out), copied aside before
    anything writes to it; through SQLite, as ``application_id``."""
    aside = live.with_name(f"{live.name}.copied-{now.strftime('%Y%m%dT%H%M%S')}")
    create_private_file(aside)
    with _connect(live, immutable=True) as main, _connect(aside) as copy:
        main.backup(copy)
        _one_file(copy)
    return aside


def put_back(copy: Path, live: Path) -> None:
    """``copy`` into the live database through SQLite (the backup API): the log's frames that
    came before are superseded, whatever checkpoints them."""
    with _connect(copy, read_only=True) as source, _connect(live) as target:
        source.backup(target)


def _one_file(copy: sqlite3.Connection) -> None:
    """A copy kept aside is one file (no log beside it), to be moved or read as it is."""
    copy.execute("PRAGMA journal_mode = DELETE").fetchall()


def _stamp_and_changes(connection: sqlite3.Connection) -> tuple[int, int]:
    stamp = int(connection.execute("PRAGMA application_id").fetchone()[0])
    found = connection.execute("SELECT value FROM meta WHERE key = ?", (CHANGES_KEY,)).fetchone()
    return stamp, int(found[0]) if found else 0


def _connect(
    path: Path, *, read_only: bool = False, immutable: bool = False
) -> closing[sqlite3.Connection]:
    """A plain connection that waits for the write lock, closed after use."""
    uri = path.as_uri()
    if read_only or immutable:
        uri += "?immutable=1" if immutable else "?mode=ro"
    return closing(sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000))
