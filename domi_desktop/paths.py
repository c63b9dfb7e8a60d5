"""Where the database lives, and files created private to the user.

Below the store (at the floor of ``errors``): ``domi-desktop status`` needs the data dir without
loading any database code. ``platformdirs`` is imported only when no directory is given, because on
Linux it brings ``tempfile``, ``shutil`` and ``random`` (about 5 ms of a 20 ms interpreter start).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "domi-desktop"
DATA_DIR_ENV = "DOMI_DATA_DIR"
DB_FILENAME = "domi.sqlite3"
LOG_DIRNAME = "logs"

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``--data-dir`` if given, else ``$DOMI_DATA_DIR``, else the per-user one.

    An empty ``DOMI_DATA_DIR`` counts as unset (shells make unsetting awkward). Creates nothing.
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    from_env = os.environ.get(DATA_DIR_ENV)
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) if missing; the directory we create is for its user only.

    An existing directory keeps its mode: the user may have chosen it (``--data-dir ~/Sync/...``).
    """
    # Only the leaf gets the mode; parents are ordinary directories like ``~/.local/share``.
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)


def create_private_file(path: Path) -> None:
    """Create an empty file with mode 0600 unless it exists (an empty file is an empty SQLite DB).

    SQLite gives its ``-wal`` and ``-shm`` files the mode of the database file, so they follow.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
