from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from contextlib import closing
from datetime import datetime
from pathlib import Path

import platformdirs
import pytest

from domi_desktop.errors import StoreError
from domi_desktop.model import CommandAction
from domi_desktop.store import DB_FILENAME, Store, _open, resolve_data_dir

posix_only = pytest.mark.posix_only  # POSIX file modes

BACKENDS = ("sqlite",)
"""About the SQLite file itself: what is refused before it is opened, and how."""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.is_file()}


def test_the_data_dir_is_the_option_else_the_environment_else_the_per_user_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOMI_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(tmp_path / "from-option") == tmp_path / "from-option"
    assert resolve_data_dir(None) == tmp_path / "from-env"
    monkeypatch.setenv("DOMI_DATA_DIR", "")
    expected = Path(platformdirs.user_data_dir("domi-desktop", appauthor=False))
    assert resolve_data_dir(None) == expected
    monkeypatch.delenv("DOMI_DATA_DIR")
    assert resolve_data_dir(None) == expected


def test_opening_reads_the_environment_when_no_directory_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    monkeypatch.setenv("DOMI_DATA_DIR", str(tmp_path / "env-data"))
    with Store.open(now=now) as store:
        assert store.path == tmp_path / "env-data" / DB_FILENAME
    assert store.path.exists()


@posix_only
def test_the_directory_and_files_are_private_to_the_user(data_dir: Path, now: datetime) -> None:
    with Store.open(data_dir, now=now) as store:
        store.create_schedule("s", "* * * * *", "UTC", CommandAction(), now=now)
        assert not store.log_dir.exists()
        log = store.log_path_for(1)
        assert _mode(data_dir) == 0o700
        assert _mode(store.log_dir) == 0o700
        assert log.parent == store.log_dir
        written = [store.path, data_dir / f"{DB_FILENAME}-wal", data_dir / f"{DB_FILENAME}-shm"]
        assert {path.name: _mode(path) for path in written} == {
            path.name: 0o600 for path in written
        }
        with closing(sqlite3.connect(store.path)) as connection:
            assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@posix_only
def test_an_existing_database_readable_by_others_is_made_private(
    data_dir: Path, now: datetime
) -> None:
    Store.open(data_dir, now=now).close()
    (data_dir / DB_FILENAME).chmod(0o644)
    Store.open(data_dir, now=now).close()
    assert _mode(data_dir / DB_FILENAME) == 0o600


def test_only_one_store_is_open_at_a_time_in_a_process(
    store: Store, tmp_path: Path, now: datetime
) -> None:
    with pytest.raises(RuntimeError, match="already open"):
        Store.open(tmp_path / "second", now=now)


def test_a_closed_store_says_so(data_dir: Path, now: datetime) -> None:
    store = Store.open(data_dir, now=now)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_schedules()


def _damaged_copies(data_dir: Path, now: datetime) -> dict[str, Callable[[Path], None]]:
    def garbage(path: Path) -> None:
        path.write_bytes(os.urandom(4096))

    def garbage_after_a_good_header(path: Path) -> None:
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))

    def truncated(path: Path) -> None:
        Store.open(data_dir, now=now).close()
        with Store.open(data_dir, now=now) as store:
            schedule = store.create_schedule("s", "* * * * *", "UTC", CommandAction(), now=now)
            for _ in range(300):
                store.record_manual_run(schedule.id, now)
        path.write_bytes(path.read_bytes()[: 3 * 4096])

    def another_programs_database(path: Path) -> None:
        with closing(sqlite3.connect(path)) as connection:
            connection.execute("CREATE TABLE notes (body TEXT)")
            connection.execute("INSERT INTO notes VALUES ('mine')")
            connection.commit()

    def from_a_newer_release(path: Path) -> None:
        Store.open(data_dir, now=now).close()
        with closing(sqlite3.connect(path)) as connection:
            connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
            connection.commit()

    return {
        "garbage": garbage,
        "garbage after a good header": garbage_after_a_good_header,
        "truncated": truncated,
        "another program's database": another_programs_database,
        "from a newer release": from_a_newer_release,
    }


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("garbage", "not an SQLite database"),
        ("garbage after a good header", "damaged"),
        ("truncated", "damaged"),
        ("another program's database", "not a domi-desktop one"),
        ("from a newer release", "made by a newer domi-desktop"),
    ],
)
def test_a_database_we_cannot_use_is_named_and_left_byte_for_byte_alone(
    data_dir: Path, now: datetime, damage: str, message: str
) -> None:
    data_dir.mkdir()
    path = data_dir / DB_FILENAME
    _damaged_copies(data_dir, now)[damage](path)
    before = _snapshot(data_dir)

    with pytest.raises(StoreError, match=message) as caught:
        Store.open(data_dir, now=now)

    assert str(path) in str(caught.value)
    assert _snapshot(data_dir) == before
    Store.open(data_dir.parent / "elsewhere", now=now).close()  # the failed open let go


def test_a_directory_where_the_database_should_be_is_refused(data_dir: Path, now: datetime) -> None:
    (data_dir / DB_FILENAME).mkdir(parents=True)
    with pytest.raises(StoreError, match="is a directory") as caught:
        Store.open(data_dir, now=now)
    assert str(data_dir / DB_FILENAME) in str(caught.value)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path, now: datetime) -> None:
    (tmp_path / "data").write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create the data directory"):
        Store.open(tmp_path / "data", now=now)


@pytest.mark.linux_only  # drops Linux capabilities
@pytest.mark.parametrize("mode", [0o000, 0o400], ids=["unreadable", "read-only"])
def test_a_database_without_permission_is_named_and_left_alone(
    data_dir: Path,
    now: datetime,
    mode: int,
    spawn: Callable[..., object],
) -> None:
    Store.open(data_dir, now=now).close()
    path = data_dir / DB_FILENAME
    path.chmod(mode)
    before = path.read_bytes()

    # As root the modes would not apply; the worker drops the capability that overrides them.
    worker = spawn("open-unprivileged", data_dir)
    out, err = worker.communicate(timeout=30)  # type: ignore[attr-defined]

    assert worker.returncode == 3, err  # type: ignore[attr-defined]
    assert str(path) in out
    assert "Permission denied" in out or "read-only" in out
    assert path.read_bytes() == before
    assert _mode(path) == mode


def test_opening_while_another_program_holds_the_lock_fails_clearly(
    data_dir: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(data_dir, now=now).close()
    with closing(sqlite3.connect(data_dir / DB_FILENAME, isolation_level=None)) as holder:
        holder.execute("PRAGMA journal_mode = DELETE")
        holder.execute("BEGIN EXCLUSIVE")
        monkeypatch.setattr(_open, "BUSY_TIMEOUT", 0.1)
        with pytest.raises(StoreError, match="locked by another process"):
            Store.open(data_dir, now=now)
