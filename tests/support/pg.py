"""A throw-away PostgreSQL server for tests: no service, no TCP, a Unix socket in a temp dir.

    with running_server() as server:
        psycopg.connect(server.dsn)      # postgresql://postgres@/postgres?host=SOCKDIR

Uses the server binaries of Debian's `postgresql` package (/usr/lib/postgresql/N/bin). initdb and
the server refuse to run as root, so as root they run as the `postgres` user (runuser) in a temp
dir owned by it; otherwise as the current user. Authentication is `trust` on the socket only
(listen_addresses=''), so nothing outside this machine's file system can reach it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SERVER_USER = "postgres"  # the database superuser's name, whoever runs the server
START_TIMEOUT = 30


class PostgresError(Exception):
    """The test server could not be set up or started."""


@dataclass(frozen=True)
class PostgresServer:
    base_dir: Path
    data_dir: Path
    socket_dir: Path
    log_file: Path
    bin_dir: Path
    start_seconds: float  # initdb + start, wall time

    @property
    def dsn(self) -> str:
        return f"postgresql://{SERVER_USER}@/postgres?host={self.socket_dir}"


def find_bin_dir() -> Path | None:
    """The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl, if any."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    usable = [d for d in found if (d / "pg_ctl").exists()]
    usable.sort(key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0)
    return usable[-1] if usable else None


def _as_server_user() -> list[str]:
    # initdb: "cannot be run as root"; the server itself refuses root too.
    return ["runuser", "-u", SERVER_USER, "--"] if os.geteuid() == 0 else []


def _run(argv: list[str], what: str) -> None:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise PostgresError(f"{what} failed: cannot run {argv[0]}: {exc}") from exc
    if result.returncode != 0:
        raise PostgresError(
            f"{what} failed (exit {result.returncode}): {' '.join(argv)}\n"
            f"{result.stdout}{result.stderr}"
        )


def start_server(bin_dir: Path) -> PostgresServer:
    started = time.monotonic()
    # Not pytest's tmp_path: its dirs are mode 0700 and owned by root, which `postgres` can't cross.
    base = Path(tempfile.mkdtemp(prefix="domi-pg-"))
    data, sockets, log = base / "data", base / "sock", base / "server.log"
    sockets.mkdir()
    if os.geteuid() == 0:
        import pwd  # POSIX only, and this module is loaded by the root conftest on every OS

        try:
            user = pwd.getpwnam(SERVER_USER)
        except KeyError as exc:
            shutil.rmtree(base)
            raise PostgresError(f"running as root but there is no {SERVER_USER!r} user") from exc
        for path in (base, sockets):
            os.chown(path, user.pw_uid, user.pw_gid)
    try:
        _run(
            [
                *_as_server_user(),
                str(bin_dir / "initdb"),
                "-D", str(data),
                "-A", "trust",
                "-U", SERVER_USER,
                "-E", "UTF8",
                "--locale=C",
                "--no-sync",  # a throw-away cluster: durability is wasted time
            ],
            "initdb",
        )  # fmt: skip
        options = f"-k {sockets} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
        _run(
            [
                *_as_server_user(),
                str(bin_dir / "pg_ctl"),
                "-D", str(data),
                "-l", str(log),
                "-o", options,
                "-w", "-t", str(START_TIMEOUT),
                "start",
            ],
            "pg_ctl start",
        )  # fmt: skip
    except PostgresError as exc:
        server_log = log.read_text(errors="replace") if log.exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        raise PostgresError(f"{exc}\n--- server log\n{server_log}") from exc
    return PostgresServer(base, data, sockets, log, bin_dir, time.monotonic() - started)


def stop_server(server: PostgresServer) -> None:
    try:
        _run(
            [*_as_server_user(), str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir),
             "-m", "immediate", "-w", "stop"],
            "pg_ctl stop",
        )  # fmt: skip
    finally:
        shutil.rmtree(server.base_dir, ignore_errors=True)


@contextmanager
def fresh_database(dsn: str, name: str) -> Iterator[str]:
    """An empty database ``name`` on the server of ``dsn`` (the maintenance database); yields its
    URL; dropped on exit, whoever is still connected."""
    import psycopg

    parts = urlsplit(dsn)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def running_server(bin_dir: Path | None = None) -> Iterator[PostgresServer]:
    """A fresh cluster, started; stopped and deleted on exit."""
    found = bin_dir or find_bin_dir()
    if found is None:
        raise PostgresError(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): "
            "apt-get install postgresql"
        )
    server = start_server(found)
    try:
        yield server
    finally:
        stop_server(server)
