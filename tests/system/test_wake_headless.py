"""Wake to run in the real headless daemon with no bus at all (as in the sleep lab's guest): root
here holds CAP_WAKE_ALARM, so the app arms its own CLOCK_REALTIME_ALARM timer, says so in
``status``, and moves it when the schedule is edited through the socket."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.cron import next_run, parse
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.system import test_headless as headless
from tests.system.test_headless import Daemon, cli, run_cli

data = headless.data  # the fixture: a data dir whose jobs and app are killed at the end

pytestmark = [pytest.mark.slow, pytest.mark.linux_only]


def wake(data: Path) -> dict[str, Any]:
    """The status's wake, or nothing while the daemon is not answering yet."""
    done = run_cli(data, "status", "--json")
    if done.returncode != 0:
        return {}
    return json.loads(done.stdout).get("wake") or {}  # type: ignore[no-any-return]


def alarm_at(expr: str) -> str:
    due = next_run(parse(expr), datetime.now().astimezone(), "UTC")
    assert due is not None
    return (due - timedelta(seconds=30)).isoformat()


def alarm_timers(pid: int) -> list[dict[str, Any]]:
    """The CLOCK_REALTIME_ALARM timerfds of process ``pid``, from /proc: flags, seconds left."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd) != "anon_inode:[timerfd]":
                continue
            info = dict(
                line.split(":", 1)
                for line in (fd.parent.parent / "fdinfo" / fd.name).read_text().splitlines()
            )
        except OSError:  # closed meanwhile
            continue
        if info["clockid"].strip() == "8":
            seconds, _ = info["it_value"].strip(" ()").split(",")
            found.append({"flags": info["settime flags"].strip(), "left": int(seconds)})
    return found


@pytest.fixture
def daemon(data: Path) -> Iterator[Daemon]:
    running = Daemon(data)
    yield running
    running.stop()


# Evaluated as the module is collected, before linux_only deselects it: os.geteuid is POSIX's.
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="the alarm timer needs CAP_WAKE_ALARM (root here)",
)
def test_the_daemon_arms_its_alarm_timer_and_moves_it_on_an_edit(
    data: Path,
    daemon: Daemon,
) -> None:
    cli(data, "schedule", "add", "backup", "--cron", "0 3 * * *", "--tz", "UTC", "--wake",
        "--", "true")  # fmt: skip
    wait_for(
        lambda: wake(data).get("at") == alarm_at("0 3 * * *"), EVENT_DEADLINE, "the alarm armed"
    )
    assert wake(data)["alarm"].endswith("(a CLOCK_REALTIME_ALARM timer)")
    # The kernel's word: the daemon holds a timerfd on CLOCK_REALTIME_ALARM (8), set absolute,
    # due when the status says.
    (timer,) = alarm_timers(daemon.process.pid)
    assert timer["flags"] == "01"  # TFD_TIMER_ABSTIME: a wall-clock instant, moved with the clock
    left = datetime.fromisoformat(alarm_at("0 3 * * *")) - datetime.now().astimezone()
    assert abs(timer["left"] - left.total_seconds()) < 60
    assert "wakes the computer " in cli(data, "status")
    cli(data, "schedule", "edit", "1", "--cron", "30 4 * * *")
    wait_for(
        lambda: wake(data).get("at") == alarm_at("30 4 * * *"), EVENT_DEADLINE, "the alarm moved"
    )
    cli(data, "schedule", "edit", "1", "--no-wake")
    wait_for(lambda: wake(data).get("at") is None, EVENT_DEADLINE, "the alarm cancelled")
