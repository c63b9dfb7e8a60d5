"""kill -9 of the headless app while jobs run: their leftovers are stopped before any re-run.

Real processes throughout: the app (``python -m domi_desktop --headless``) on a temp data dir, its
jobs (a shell with background grandchildren), and psutil watching that one schedule's job never
has two live copies. The soak test speeds the app's clock up with libfaketime (Debian packages
``faketime`` and ``libfaketime``) so that minutes of ``* * * * *`` dues pass in seconds; the jobs
do not inherit it (their environment is explicit), so they run in real time.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from domi_desktop.model import PROCESS_DIED
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.support.processes import kill_strays

pytestmark = pytest.mark.linux_only  # POSIX sessions, /proc

FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SPEED = 10
"""The app's clock runs this many times faster than the real one in the soak test."""


def env_for(data: Path, faketime: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SYSTEM_BUS_ADDRESS",)}
    env["DOMI_DATA_DIR"] = str(data)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={data}/no-such-bus"
    if faketime is not None:
        env["LD_PRELOAD"] = str(FAKETIME_LIB)
        env["FAKETIME"] = faketime
    return env


def cli(data: Path, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env_for(data), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def start_app(data: Path, faketime: str | None = None) -> subprocess.Popen[bytes]:
    with (data / "daemon.stderr").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "domi_desktop", "--headless"],
            env=env_for(data, faketime), stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip


def sql(data: Path, statement: str, *params: object) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(data / "domi.sqlite3", timeout=30)) as db, db:
        return db.execute(statement, params).fetchall()


def copies(tag: str) -> set[int]:
    """The sessions holding a live process of the job tagged ``tag`` (one session per copy)."""
    sessions = set()
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["status"] == psutil.STATUS_ZOMBIE or tag not in " ".join(cmdline):
            continue
        with contextlib.suppress(OSError):
            sessions.add(os.getsid(process.pid))
    return sessions


class Watch:
    """Polls psutil on a thread: the most copies of each job seen alive at once."""

    def __init__(self, tags: list[str]) -> None:
        self.tags = tags
        self.most = dict.fromkeys(tags, 0)
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            for tag in self.tags:
                self.most[tag] = max(self.most[tag], len(copies(tag)))
            self.polls += 1
            time.sleep(0.02)

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        return self.most


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    path.mkdir()
    try:
        yield path
    finally:
        # Whatever a failing test left behind: the jobs carry the data dir's path in their
        # command, the apps in their environment.
        kill_strays(tmp_path)


def job(tag: str, data: Path, seconds: int) -> str:
    """A shell with two grandchildren tagged ``tag``; each start appends a line to ``<tag>.starts``.

    The grandchildren carry the tag in their command line (``$0``), so a copy is still seen once
    the job's own shell is gone.
    """
    marker = data / f"{tag}.starts"
    grandchild = f"sh -c 'sleep {seconds}; :' {tag}"
    return f"echo $$ >> {marker}; {grandchild} & {grandchild} & wait"


def test_a_restart_after_kill_9_stops_the_leftover_tree_before_the_resumed_copy(
    data: Path,
) -> None:
    tag = f"leftover-{os.getpid()}"
    cli(data, "schedule", "add", "new year", "--cron", "0 0 1 1 *", "--tz", "UTC", "--shell",
        "--", job(tag, data, 300))  # fmt: skip
    # Last fired a year before the latest New Year: start-up owes one catch-up fire.
    sql(data, "UPDATE schedules SET last_due = last_due - 400 * 86400 * 1000000")
    starts = data / f"{tag}.starts"
    watch = Watch([tag])
    app = start_app(data)
    try:
        wait_for(
            lambda: starts.exists() and len(copies(tag)) == 1, EVENT_DEADLINE, "the job to start"
        )
        wait_for(
            lambda: sql(data, "SELECT job_pid FROM runs")[0][0], EVENT_DEADLINE, "the pid on record"
        )
        (old_session,) = copies(tag)
        old_tree = [p for p in psutil.process_iter() if _sid(p.pid) == old_session]
        assert len(old_tree) >= 3  # the job and its grandchildren
        app.send_signal(signal.SIGKILL)
        app.wait(EVENT_DEADLINE)
        # The app is gone and the job's tree goes on without it.
        assert copies(tag) == {old_session}

        app = start_app(data)
        wait_for(
            lambda: len(starts.read_text().split()) == 2, EVENT_DEADLINE, "the resumed job to start"
        )
        wait_for(lambda: copies(tag), EVENT_DEADLINE, "the resumed copy")
        (new_session,) = copies(tag)
        assert new_session != old_session
        assert not any(_alive(p) for p in old_tree)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(EVENT_DEADLINE)
    assert watch.stop()[tag] == 1, "two copies of the job were alive at once"
    first, resumed = sql(data, "SELECT status, reason, trigger, resumed_from, id FROM runs")
    assert first[0] == "interrupted"
    assert first[1].startswith(f"{PROCESS_DIED}; stopped its leftover process tree (")
    assert resumed[2] == "resumed" and resumed[3] == first[4]


def test_a_job_whose_pid_was_reused_is_left_alone_at_the_restart(data: Path) -> None:
    cli(data, "schedule", "add", "new year", "--cron", "0 0 1 1 *", "--tz", "UTC", "--", "true")
    stranger = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        # A run left running by a dead app whose job had this pid, but started at another time.
        started = f"{_boot_id()}:1"
        sql(
            data,
            "INSERT INTO runs (schedule_id, status, \"trigger\", fired_at, owner_pid, owner_token,"
            " job_pid, job_started) VALUES (1, 'running', 'manual', 0, ?, 'gone', ?, ?)",
            _dead_pid(), stranger.pid, started,
        )  # fmt: skip
        app = start_app(data)
        try:
            wait_for(
                lambda: sql(data, "SELECT count(*) FROM runs")[0][0] == 2,
                EVENT_DEADLINE,
                "the resume",
            )
        finally:
            app.send_signal(signal.SIGTERM)
            app.wait(EVENT_DEADLINE)
        assert stranger.poll() is None, "a process that merely reused the pid was stopped"
        [(status, reason)] = sql(data, "SELECT status, reason FROM runs WHERE id = 1")
        assert (status, reason) == ("interrupted", PROCESS_DIED)
    finally:
        stranger.kill()
        stranger.wait()


@pytest.mark.slow
@pytest.mark.skipif(not FAKETIME_LIB.exists(), reason="needs libfaketime (Debian: libfaketime)")
def test_kill_9_soak_no_double_fires_no_lost_dues_no_stuck_runs_never_two_copies(
    data: Path,
) -> None:
    tags = [f"soak{n}-{os.getpid()}" for n in range(3)]
    for n, tag in enumerate(tags):
        # Jobs of 4 to 8 real seconds: 40 to 80 s of the app's clock, across its kills and dues.
        cli(data, "schedule", "add", tag, "--cron", "* * * * *", "--tz", "UTC", "--shell",
            "--", job(tag, data, 4 + 2 * n))  # fmt: skip
    real0 = time.time()
    fake0 = datetime.now(UTC).replace(second=50, microsecond=0)
    first_due = fake0.replace(second=0) + timedelta(minutes=1)
    sql(data, "UPDATE schedules SET last_due = ?", _micros(fake0))

    def faketime() -> str:
        # Every start continues one fast clock, not a new one from its own start.
        fake = fake0 + timedelta(seconds=(time.time() - real0) * SPEED)
        return f"@{fake:%Y-%m-%d %H:%M:%S} x{SPEED}"

    log = data / "domi-desktop.log"

    def starts() -> int:
        return log.read_text().count("wake (start)") if log.exists() else 0

    rng = random.Random(9)
    watch = Watch(tags)
    cycles = 0
    before = starts()
    app = start_app(data, faketime())
    try:
        while time.time() - real0 < 100:
            time.sleep(rng.uniform(2, 7))
            app.send_signal(signal.SIGKILL)
            app.wait(EVENT_DEADLINE)
            cycles += 1
            before = starts()
            app = start_app(data, faketime())
        # SIGTERM only once the last one is up: a loaded machine took longer than the 3 s below
        # to start it, and a SIGTERM before its handler ends it -15 (as any process).
        wait_for(lambda: starts() > before, EVENT_DEADLINE, "the last restart")
        time.sleep(3)
    finally:
        app.send_signal(signal.SIGTERM)
        assert app.wait(EVENT_DEADLINE) == 0
    # One last start and stop settles what the last kill left, as a user's next login would.
    before = starts()
    app = start_app(data, faketime())
    wait_for(lambda: starts() > before, EVENT_DEADLINE, "the last start")
    app.send_signal(signal.SIGTERM)
    assert app.wait(EVENT_DEADLINE) == 0
    most = watch.stop()

    assert cycles >= 12
    assert most == dict.fromkeys(tags, 1), f"copies alive at once: {most}"
    for n, _tag in enumerate(tags, start=1):
        [(last_due,)] = sql(data, "SELECT last_due FROM schedules WHERE id = ?", n)
        dues = [
            due
            for (due,) in sql(
                data,
                "SELECT due FROM runs WHERE schedule_id = ? AND due IS NOT NULL ORDER BY due",
                n,
            )
        ]
        assert len(dues) == len(set(dues)), f"schedule {n} fired a due twice"
        expected = range(_micros(first_due), last_due + 1, 60_000_000)
        assert dues == list(expected), f"schedule {n} lost a due"
        assert len(dues) >= 10
    assert sql(data, "SELECT count(*) FROM runs WHERE status = 'running'") == [(0,)]
    stopped = sql(data, "SELECT count(*) FROM runs WHERE reason LIKE '%stopped its leftover%'")
    assert stopped[0][0] >= 1
    assert not any(copies(tag) for tag in tags)


def _micros(when: datetime) -> int:
    return int(when.timestamp()) * 1_000_000


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)
