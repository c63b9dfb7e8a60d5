"""Machines on one PostgreSQL store, for real: headless ``python -m domi_desktop --headless``
processes (machines a, b and c, each with its own data dir and runtime dir) on a fresh database,
their clocks ``SPEED`` times fast under libfaketime (one clock for all: every start continues it).
The jobs do not inherit the fast clock (their environment is explicit)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support import faketime, pg
from tests.support.fakes import EVENT_DEADLINE
from tests.support.processes import kill, kill_strays


def _library() -> Path:
    """The single-threaded build, as the kill soak uses: with the MT build a job's fork could
    inherit its clock mutex held by another thread and hang before exec (seen: an app stuck at
    quit waiting for such a child)."""
    found = faketime.find_library()
    assert found is not None
    single = found.with_name(found.name.replace("libfaketimeMT", "libfaketime"))
    return single if single.exists() else found


SPEED = 20
"""The apps' clocks run this many times faster than the real one."""
LEASE = 40
"""Seconds of the apps' clock (2 real seconds): renewed every 13 fake seconds."""
MACHINES = ("a", "b", "c")


@dataclass
class Fleet:
    url: str
    root: Path
    real0: float
    fake0: datetime
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    """Every app started, for the fixture to stop whatever a failing test left running."""

    def fake_now(self) -> datetime:
        return self.fake0 + timedelta(seconds=(time.time() - self.real0) * SPEED)

    def env(self, machine: str, *, fast: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOMI_", "FAKETIME"))}
        data, runtime = self.root / machine / "data", self.root / machine / "run"
        env.update(
            DOMI_STORE=self.url,
            DOMI_MACHINE=machine,
            DOMI_LEASE=str(LEASE),
            DOMI_DATA_DIR=str(data),
            XDG_RUNTIME_DIR=str(runtime),
            QT_QPA_PLATFORM="offscreen",
            PYTHONFAULTHANDLER="1",
            DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={data}/no-such-bus",
        )
        if fast:
            library = _library()
            # Every start continues one fast clock, not a new one from its own start.
            env["LD_PRELOAD"] = str(library)
            env["FAKETIME"] = f"@{self.fake_now():%Y-%m-%d %H:%M:%S} x{SPEED}"
        return env

    def cli(self, machine: str, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "domi_desktop", *args],
            capture_output=True, text=True, env=self.env(machine), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout

    def start(self, machine: str) -> subprocess.Popen[bytes]:
        with (self.root / machine / "stderr").open("ab") as log:
            app = subprocess.Popen(
                [sys.executable, "-m", "domi_desktop", "--headless"],
                env=self.env(machine), stdout=subprocess.DEVNULL, stderr=log,
            )  # fmt: skip
        self.started.append(app)
        return app

    def log(self, machine: str) -> str:
        path = self.root / machine / "data" / "domi-desktop.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def sql(self, statement: str, *params: object) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as db:
            cursor = db.execute(statement, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description is not None else []


@pytest.fixture
def fleet(postgresql_dsn: str, tmp_path: Path) -> Iterator[Fleet]:
    with pg.fresh_database(postgresql_dsn, f"fleet_{os.getpid()}") as url:
        for machine in MACHINES:
            (tmp_path / machine / "data").mkdir(parents=True)
            (tmp_path / machine / "run").mkdir(mode=0o700)
        fake0 = datetime.now(UTC).replace(second=50, microsecond=0)
        fleet = Fleet(url, tmp_path, time.time(), fake0)
        try:
            yield fleet
        finally:
            _stop_left_behind(fleet, tmp_path)


def _stop_left_behind(fleet: Fleet, tmp_path: Path) -> None:
    """Whatever a failing test left running: its apps (a stopped one too), and their jobs."""
    for app in fleet.started:
        kill(app)  # SIGKILL reaches a SIGSTOPped process as well
    kill_strays(tmp_path)


def exit_code(app: subprocess.Popen[bytes]) -> int:
    """Its exit code; one that has not quit by the deadline is made to dump its threads
    (SIGABRT)."""
    try:
        return app.wait(EVENT_DEADLINE)
    except subprocess.TimeoutExpired:
        app.send_signal(signal.SIGABRT)
        return app.wait(10) or -1


def micros(when: datetime) -> int:
    return int(when.timestamp()) * 1_000_000
