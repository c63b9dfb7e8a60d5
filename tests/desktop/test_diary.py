"""The machine's story as the real app writes it: the headless app on the private system bus with
the fake logind's PrepareForSleep, its quit, its crash; read back by ``domi-desktop timeline``,
over the socket while the app runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.harness import Child, FakeLogind, Spawn
from tests.support.fakes import wait_for

pytestmark = [pytest.mark.gui, pytest.mark.linux_only]

APP = [sys.executable, "-m", "domi_desktop"]
WAIT = 60


def cli(data: Path, *args: str) -> Any:
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    done = subprocess.run([*APP, *args], capture_output=True, text=True, env=env, timeout=60)
    return json.loads(done.stdout) if done.returncode == 0 and "--json" in args else None


def running(data: Path) -> bool:
    status = cli(data, "status", "--json")
    return bool(status and status["running"] and status["last_wake"])


def start(spawn: Spawn, data: Path) -> Child:
    child = spawn([*APP, "--headless"], env={"DOMI_DATA_DIR": str(data)})
    wait_for(lambda: running(data), WAIT, "the app to answer on its socket")
    return child


def story(data: Path) -> list[dict[str, Any]]:
    told = cli(data, "timeline", "--days", "1", "--json")
    assert told is not None
    return told["spans"]  # type: ignore[no-any-return]


def length(span: dict[str, Any]) -> timedelta:
    return datetime.fromisoformat(span["end"]) - datetime.fromisoformat(span["start"])


def test_a_sleep_is_dated_by_logind_and_a_crash_by_the_last_heartbeat(
    spawn: Spawn, fake_logind: FakeLogind, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    app = start(spawn, data)
    wait_for(lambda: "listening for resume from sleep" in app.stderr(), WAIT, "logind")

    fake_logind.prepare_for_sleep(True)
    time.sleep(1.5)  # the machine "sleeps" this long between the two signals
    fake_logind.prepare_for_sleep(False)
    wait_for(lambda: any(s["kind"] == "asleep" for s in story(data)), WAIT, "the sleep")
    (asleep,) = [s for s in story(data) if s["kind"] == "asleep"]
    assert asleep["source"] == "signal"  # the OS said when it began, not the last heartbeat
    assert timedelta(seconds=1) <= length(asleep) < timedelta(seconds=WAIT)
    assert [s["kind"] for s in story(data)] == ["awake", "asleep", "awake"]

    os.kill(app.pid, signal.SIGKILL)  # no word from the app: its last heartbeat ends it
    app.process.wait(WAIT)
    start(spawn, data)
    wait_for(lambda: len(story(data)) == 5, WAIT, "the crash on record")
    crash = story(data)[3]
    assert (crash["kind"], crash["source"]) == ("off", "crash")
    assert crash["start"] == story(data)[2]["end"]


def test_a_quit_is_off_until_the_next_start(spawn: Spawn, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    app = start(spawn, data)
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    subprocess.run([*APP, "quit"], capture_output=True, env=env, timeout=WAIT, check=True)
    app.process.wait(WAIT)
    start(spawn, data)
    wait_for(lambda: len(story(data)) == 3, WAIT, "the time without the app")
    awake, off, again = story(data)
    assert (off["kind"], off["source"]) == ("off", "quit")
    assert awake["end"] == off["start"] and off["end"] == again["start"]
