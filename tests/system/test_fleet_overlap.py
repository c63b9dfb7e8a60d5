"""'Skip if still running' across machines, for real: three headless apps on one PostgreSQL store,
a 90 s job due every minute, never two live copies, also when the machine running it freezes past
its lease (SIGSTOP) or dies (SIGKILL).

The apps' clocks run ``SPEED`` times fast (``tests.system.fleet``): ten minutes of dues in half a minute.
A watcher lists the process table all along: each copy of the job is a shell whose command line
carries a marker. A due claimed while another machine runs the job is recorded ``busy``
(``FireClaim.exclusive``); a frozen or dead machine's job is stopped by its warden
(``actions.warden``) before another machine may take the run over and re-run it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from datetime import timedelta

import psutil
import pytest

from tests.support import faketime
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.system.fleet import LEASE, MACHINES, SPEED, Fleet, exit_code, micros

pytestmark = [
    pytest.mark.slow,
    pytest.mark.linux_only,  # POSIX signals
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

JOB_SECONDS = 90 / SPEED
"""Real seconds of the job: 90 s of the apps' clock, due every 60."""
MARKER = "domi-overlap-marker"


class Watcher:
    """The most copies of the job seen alive at once, from the process table."""

    def __init__(self) -> None:
        self.most = 0
        self.seen: set[int] = set()
        self.crowds: list[tuple[float, frozenset[int]]] = []
        """When more than one copy was alive, and which (for the failure's message)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def copies(self) -> set[int]:
        """The sessions of the marked processes: a job leads a session of its own, and its shell
        forks children that carry the same command line until they exec."""
        alive = set()
        for process in psutil.process_iter(["cmdline", "status"]):
            cmdline = process.info["cmdline"] or []
            if process.info["status"] != psutil.STATUS_ZOMBIE and any(
                MARKER in part for part in cmdline
            ):
                with contextlib.suppress(ProcessLookupError):
                    alive.add(os.getsid(process.pid))
        return alive

    def _watch(self) -> None:
        while not self._stop.is_set():
            copies = self.copies()
            self.seen |= copies
            self.most = max(self.most, len(copies))
            if len(copies) > 1:
                self.crowds.append((time.time(), frozenset(copies)))
            time.sleep(0.02)


def _running_on(fleet: Fleet, *, just_started: bool = False) -> str | None:
    """The machine running the job; with ``just_started``, only if it started within the last
    half real second: its job then outlives the lease, and only a warden can stop it in time."""
    since = fleet.fake_now() - timedelta(seconds=SPEED / 2) if just_started else fleet.fake0
    rows = fleet.sql(
        "SELECT machine FROM runs WHERE status = 'running' AND started_at >= %s "
        "ORDER BY id DESC LIMIT 1",
        micros(since),
    )
    return str(rows[0][0]) if rows else None


def test_a_job_still_running_on_one_machine_is_never_started_on_another(fleet: Fleet) -> None:
    fleet.cli("a", "schedule", "add", "long", "--cron", "* * * * *", "--tz", "UTC", "--shell",
              "--", f"sleep {JOB_SECONDS}; : {MARKER}")  # fmt: skip
    fleet.real0 = time.time()
    fleet.fake0 = fleet.fake0.replace(second=50)
    fleet.sql("UPDATE schedules SET last_due = %s", micros(fleet.fake0))
    apps = {machine: fleet.start(machine) for machine in MACHINES}
    try:
        with Watcher() as watcher:
            # A few minutes of plain overlap between machines, then the machine running the job
            # freezes for three leases, then the one running it dies.
            time.sleep(4 * 60 / SPEED)
            stopped = wait_for(
                lambda: _running_on(fleet, just_started=True), EVENT_DEADLINE, "a new copy"
            )
            assert isinstance(stopped, str)
            apps[stopped].send_signal(signal.SIGSTOP)
            time.sleep(3 * LEASE / SPEED)
            apps[stopped].send_signal(signal.SIGCONT)
            victim = wait_for(
                lambda: _running_on(fleet, just_started=True), EVENT_DEADLINE, "a new copy"
            )
            assert isinstance(victim, str)
            apps[victim].send_signal(signal.SIGKILL)
            apps[victim].wait(EVENT_DEADLINE)
            time.sleep(LEASE / SPEED)
            starts = fleet.log(victim).count("wake (start)")
            apps[victim] = fleet.start(victim)
            # Up again (a SIGTERM while it still imports ends it with the signal), and two more
            # dues with all three machines before the end.
            wait_for(
                lambda: fleet.log(victim).count("wake (start)") > starts,
                EVENT_DEADLINE,
                "the restart",
            )
            end = max(fleet.fake0 + timedelta(minutes=10), fleet.fake_now() + timedelta(minutes=2))
            while fleet.fake_now() < end:
                time.sleep(0.2)
    finally:
        for app in apps.values():
            with contextlib.suppress(ProcessLookupError):
                app.send_signal(signal.SIGCONT)
                app.send_signal(signal.SIGTERM)
        codes = {machine: exit_code(app) for machine, app in apps.items()}

    hung = {
        m: (c, fleet.log(m)[-1500:], (fleet.root / m / "stderr").read_text()[-1500:])
        for m, c in codes.items()
        if c
    }
    assert not hung, f"did not quit cleanly: {hung}"
    busy = fleet.sql("SELECT count(*) FROM runs WHERE reason = 'busy'")[0][0]
    machines = fleet.sql("SELECT DISTINCT machine FROM runs WHERE job_pid IS NOT NULL")
    print(
        f"overlap: {len(watcher.seen)} copies started, at most {watcher.most} at once, "
        f"{busy} dues busy, run on {sorted(m for (m,) in machines)}"
    )
    runs = fleet.sql(
        'SELECT id, machine, status, reason, "trigger", job_pid, started_at, finished_at '
        "FROM runs WHERE job_pid IS NOT NULL ORDER BY id"
    )
    assert watcher.most == 1, (
        f"{watcher.most} live copies at once: {watcher.crowds[:3]} (real s {fleet.real0}); {runs}"
    )
    assert len(watcher.seen) >= 3
    assert busy >= 2
