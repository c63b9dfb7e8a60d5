"""Session triggers end to end: the headless app under libfaketime and the fake logind
(``Unlock``, ``PrepareForSleep``) on the private system bus. Once per interval, recorded with
their trigger; the jobs that run before sleep end (or are stopped) before the app's delay lock is
given back."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.harness import FakeLogind
from tests.desktop.headless_app import App
from tests.support import faketime

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

DEADLINE = 60.0
"""Real seconds for what should take well under one (a loaded machine)."""


def wait_for(what: Callable[[], bool], why: str, app: App) -> None:
    deadline = time.monotonic() + DEADLINE
    while not what():
        assert time.monotonic() < deadline, f"{why}\n{app.log()}"
        time.sleep(0.05)


def add(app: App, name: str, *options: str, seconds: float = 0.0) -> tuple[int, Path]:
    """A schedule whose job writes ``start`` and, after ``seconds``, ``end`` to a file of its
    own; its cron expression fires once a year (what runs here runs by a trigger)."""
    out = app.root / f"{name}.txt"
    job = (
        f"import time\nf = open({str(out)!r}, 'a')\nf.write('start\\n'); f.flush()\n"
        f"time.sleep({seconds})\nf.write('end\\n')\n"
    )
    added = app.cli(
        "schedule", "add", name, "--cron", "0 0 1 1 *", "--tz", "UTC", *options, "--json",
        "--", sys.executable, "-c", job,
    )  # fmt: skip
    return int(added["id"]), out


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def triggers(app: App, schedule: int) -> list[tuple[str, str]]:
    found: list[dict[str, Any]] = app.runs(schedule)
    return [(run["trigger"], run["status"]) for run in reversed(found)]


def test_each_moment_runs_its_schedules_once_per_interval(
    app: App, fake_logind: FakeLogind
) -> None:
    login, login_out = add(app, "at login", "--at-login")
    unlock, unlock_out = add(app, "at unlock", "--at-unlock", "--min-interval", "3600")
    resume, resume_out = add(app, "on resume", "--on-resume")
    app.start()
    wait_for(lambda: lines(login_out) == ["start", "end"], "no run at login", app)

    for _ in range(3):
        fake_logind.control("EmitUnlock", "")
    wait_for(lambda: triggers(app, unlock) == [("unlock", "succeeded")], "no run at unlock", app)
    app.at(app.fake_start + timedelta(minutes=30))
    fake_logind.control("EmitUnlock", "")
    app.at(app.fake_start + timedelta(minutes=61))
    fake_logind.control("EmitUnlock", "")
    wait_for(lambda: len(lines(unlock_out)) == 4, "no second run an hour later", app)

    fake_logind.prepare_for_sleep(True)
    app.at(app.fake_start + timedelta(hours=3))
    fake_logind.prepare_for_sleep(False)
    wait_for(lambda: lines(resume_out) == ["start", "end"], "no run on resume", app)
    app.poke()
    time.sleep(1)  # a run too many would have its moment

    assert triggers(app, login) == [("login", "succeeded")]
    assert triggers(app, unlock) == [("unlock", "succeeded")] * 2
    assert triggers(app, resume) == [("resume", "succeeded")]
    assert lines(login_out) == ["start", "end"]


def test_jobs_before_sleep_end_or_are_stopped_before_the_lock_goes(
    app: App, fake_logind: FakeLogind
) -> None:
    quick, quick_out = add(app, "quick", "--before-sleep", seconds=1.5)
    app.start()
    wait_for(lambda: fake_logind.inhibitors_held() >= 1, "no delay lock taken", app)
    fake_logind.prepare_for_sleep(True)
    wait_for(lambda: lines(quick_out) == ["start"], "no run before sleep", app)
    assert fake_logind.inhibitors_held() >= 1, "the lock went while the job ran"
    wait_for(lambda: fake_logind.inhibitors_held() == 0, "the lock was never given back", app)
    assert lines(quick_out) == ["start", "end"], "the lock went before the job ended"
    assert triggers(app, quick) == [("before_sleep", "succeeded")]

    fake_logind.prepare_for_sleep(False)
    slow, slow_out = add(app, "slow", "--before-sleep", seconds=300)
    app.cli("schedule", "disable", str(quick))
    wait_for(lambda: fake_logind.inhibitors_held() >= 1, "no delay lock after the wake", app)
    asleep = fake_logind.prepare_for_sleep(True)
    wait_for(lambda: lines(slow_out) == ["start"], "no run before the second sleep", app)
    wait_for(lambda: fake_logind.inhibitors_held() == 0, "the lock was never given back", app)
    print(f"a job too long for the sleep: lock given back after {time.monotonic() - asleep:.1f} s")
    wait_for(lambda: bool(app.runs(slow)) and app.runs(slow)[0]["status"] != "running",
             "the long job was not stopped", app)  # fmt: skip
    (run,) = app.runs(slow)
    assert run["status"] == "interrupted" and run["trigger"] == "before_sleep"
    assert run["reason"] == "stopped: the machine went to sleep"
