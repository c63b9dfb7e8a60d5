"""A wake's notification does not wait for its claims' commit.

Real parts: the tray app's announcer and notifier path (the notifier records what it is told),
the host's runtime with its recorder thread, a SQLite file whose write lock a second process
holds (``BEGIN IMMEDIATE``, ``tests/locks.py``) and jobs that are real processes. The machine
"sleeps" three days (the host's clock moved on) and resumes: the wake's notice goes out while the
lock is held, so before any claim of the wake can be on disk; once the lock goes, the claims
commit and each job runs once, each having seen its own claim committed. If the claims then
cannot be written, the app says so once and no job runs.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from domi_desktop.app.gui import connect
from domi_desktop.clock import SystemClock
from domi_desktop.model import CommandAction, WakeReason
from domi_desktop.platform.notify import Notice, Notifier
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui.tray import TrayApp
from tests.support.engine import RunningEngine, running_engine
from tests.support.locks import WriteLock

NAMES = ("backup", "report", "sync")
WAIT_MS = 90_000
"""Generous: a loaded machine, and the recorder's first try waits out SQLite's busy timeout."""
DB_REFUSED = "Cannot write to the database"
REFUSE_RUNS = (
    "CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'refused'); END"
)
"""Another program's change that makes every claim fail for good (not a lock to wait out)."""

JOB = """
import os, sqlite3, sys
run_id = int(os.environ["DOMI_RUN_ID"])
with sqlite3.connect(sys.argv[1]) as db:
    row = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
with open(sys.argv[2], "a") as ran:
    ran.write(f"{run_id} {row[0] if row else 'unclaimed'}\\n")
"""
"""A job that writes down its run and that run's committed status as it starts."""


class ShiftedClock(SystemClock):
    """The machine's clock, moved on by the sleep the test says."""

    def __init__(self) -> None:
        self.slept = timedelta(0)

    def now(self) -> datetime:
        return super().now() + self.slept


class Recorded(Notifier):
    def __init__(self) -> None:
        super().__init__()
        self.notices: list[Notice] = []

    def notify(self, notice: Notice) -> None:
        self.notices.append(notice)


@dataclass
class App:
    engine: RunningEngine
    clock: ShiftedClock
    notifier: Recorded
    ran: Path
    locks: list[WriteLock]

    @property
    def path(self) -> Path:
        return self.engine.handle.store.path

    def store_problem(self) -> str | None:
        return self.engine.call(lambda host: host.runtime.store_problem)

    def lock(self) -> WriteLock:
        """The file's write lock, taken by another process (let go after the app stopped, if
        the test does not)."""
        self.locks.append(WriteLock(self.path))
        return self.locks[-1]

    def resume(self) -> None:
        self.clock.slept += timedelta(days=3)
        self.engine.call(lambda host: host.runtime.driver.wake(WakeReason.resume))

    def wake_notices(self) -> list[Notice]:
        return [n for n in self.notifier.notices if n.title.endswith("caught up after sleep")]

    def claimed(self) -> list[tuple[str, str]]:
        """The wake's runs on disk (name, status), as another process reads the file."""
        with closing(sqlite3.connect(self.path)) as db:
            rows = db.execute(
                "SELECT s.name, r.status FROM runs r JOIN schedules s ON s.id = r.schedule_id"
                " WHERE r.due IS NOT NULL AND r.status != 'skipped' ORDER BY s.name"
            ).fetchall()
        return [(name, status) for name, status in rows]

    def manual_runs(self) -> list[str]:
        with closing(sqlite3.connect(self.path)) as db:
            rows = db.execute("SELECT status FROM runs WHERE trigger = 'manual'").fetchall()
        return [status for (status,) in rows]

    def jobs(self) -> dict[str, list[str]]:
        return {path.name: path.read_text().splitlines() for path in sorted(self.ran.iterdir())}


@pytest.fixture
def locks() -> Iterator[list[WriteLock]]:
    """Set up before the app, so torn down after it: a test that fails with the lock held stops
    the app first, with its claims never on disk (nothing launched behind the test's back)."""
    taken: list[WriteLock] = []
    try:
        yield taken
    finally:
        for lock in taken:
            lock.release()


@pytest.fixture
def app(
    locks: list[WriteLock],
    qapp: QApplication,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[App]:
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    clock = ShiftedClock()
    monkeypatch.setattr("domi_desktop.app.host.SystemClock", lambda: clock)
    ran = tmp_path / "ran"
    ran.mkdir()
    with Store.open(tmp_path / "data", now=clock.now()) as store:
        for name in NAMES:
            argv = (sys.executable, "-c", JOB, str(store.path), str(ran / name))
            store.create_schedule(
                name, "0 9 * * *", "UTC", CommandAction(argv=argv), now=clock.now()
            )
        # Nothing is due at its start: every schedule was made just now.
        with running_engine(store, secrets=MemorySecretStore()) as engine:
            tray = TrayApp(qapp, engine.handle)
            connect(tray, engine.handle)
            notifier = Recorded()
            tray.notifier.close()  # the tray's own, replaced: its thread ends with it
            tray.notifier = notifier
            try:
                yield App(engine, clock, notifier, ran, locks)
            finally:
                tray.close()


def test_a_wake_is_told_while_another_process_holds_the_write_lock_then_each_job_runs_once(
    app: App, qtbot: Any
) -> None:
    lock = app.lock()
    app.resume()
    qtbot.waitUntil(lambda: app.wake_notices() != [], timeout=WAIT_MS)
    # Told before the recorder's first try at the claims even gave up on the lock.
    (told,) = app.notifier.notices
    assert told.run_id is None  # no run is on record to open yet
    assert [line.split(":")[0] for line in told.body.splitlines()] == list(NAMES)
    qtbot.waitUntil(lambda: app.store_problem() is not None, timeout=WAIT_MS)
    assert app.claimed() == []
    assert app.jobs() == {}
    lock.release()
    qtbot.waitUntil(lambda: len(app.jobs()) == len(NAMES), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: app.claimed() == [(name, "succeeded") for name in NAMES], timeout=WAIT_MS
    )
    jobs = app.jobs()
    assert {name: [line.split()[1] for line in lines] for name, lines in jobs.items()} == {
        name: ["running"] for name in NAMES
    }  # once each, and each saw its claim committed as it started
    assert len(app.wake_notices()) == 1
    assert [n.title for n in app.notifier.notices].count(DB_REFUSED) == 1


def test_claims_that_then_fail_to_commit_are_said_once_and_nothing_runs(
    app: App, qtbot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="domi_desktop")
    lock = app.lock()
    app.resume()
    qtbot.waitUntil(lambda: app.wake_notices() != [], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: app.store_problem() is not None, timeout=WAIT_MS)
    lock.release(then=REFUSE_RUNS)
    qtbot.waitUntil(
        lambda: "the fires of this wake could not be recorded" in caplog.text, timeout=WAIT_MS
    )
    assert "refused" in caplog.text
    assert [n.title for n in app.notifier.notices].count(DB_REFUSED) == 1
    assert len(app.wake_notices()) == 1
    assert app.claimed() == []
    assert app.jobs() == {}
    assert app.engine.call(lambda host: host.runtime.running_runs()) == []
