"""When I step away, on a virtual desktop: the headless app reads the session's idle time from a
stand-in GNOME idle monitor on the session bus, which serves the X server's own count, and a test
types for real (``xdotool``) under Xvfb.

0 starts while input is younger than the threshold or while another app holds an idle
inhibitor; a start once nobody types; the whole tree paused (``T`` in /proc/PID/stat for every
process) after a key, and resumed at the next away; History says the pause; a user who types
until past the deadline gets exactly one run, at the deadline, left to run to its end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from domi_desktop.platform.idle import idle_source_for_platform
from tests.desktop.harness import HERE, Child, Spawn, child_env, start_fake
from tests.support.fakes import wait_for

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool"),
]

APP = [sys.executable, "-m", "domi_desktop"]
WAIT = 90.0
"""Real seconds a test waits for what it checks: generous, for loaded machines."""
AWAY_MINUTES = 0.1
"""Six seconds of no input: away."""


class GnomeIdle:
    """The running fake_idle.py and a connection to its control interface."""

    def __init__(self, child: Child, control: DBusConnection) -> None:
        self.child = child
        self.control = control

    def inhibit(self, held: bool) -> None:
        address = DBusAddress(
            "/org/domi/Test", bus_name="org.gnome.Mutter.IdleMonitor", interface="org.domi.Test"
        )
        self.control.send_and_get_reply(new_method_call(address, "Inhibit", "b", (held,)))


@pytest.fixture
def gnome_idle(tmp_path: Path) -> Iterator[GnomeIdle]:
    child = start_fake(HERE / "fake_idle.py", [], tmp_path / "fake_idle.jsonl", child_env(tmp_path))
    control = open_dbus_connection("SESSION")
    try:
        yield GnomeIdle(child, control)
    finally:
        control.close()
        child.stop()


class Typist:
    """Real key presses every half second on the X display, on a thread the test owns."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last = 0.0

    def press(self) -> None:
        subprocess.run(["xdotool", "key", "shift"], check=True, timeout=30)
        self.last = time.monotonic()

    def start(self) -> None:
        assert self._thread is None
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="typist", daemon=True)
        self._thread.start()
        wait_for(lambda: self.last > 0, WAIT, "the first key press")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.press()
            self._stop.wait(0.5)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._thread = None


@pytest.fixture
def typist() -> Iterator[Typist]:
    made = Typist()
    try:
        yield made
    finally:
        made.stop()


def test_the_session_idle_time_comes_from_the_gnome_idle_monitor(
    gnome_idle: GnomeIdle, typist: Typist
) -> None:
    source = idle_source_for_platform("linux")
    typist.press()
    presence = source.read()
    assert source.status == "idle time from GNOME (Mutter's idle monitor)"
    assert presence.idle is not None and presence.idle < timedelta(seconds=2)
    assert not presence.presenting
    time.sleep(1.5)
    later = source.read().idle
    assert later is not None and later >= timedelta(seconds=1)
    gnome_idle.inhibit(True)
    assert source.read().presenting
    gnome_idle.inhibit(False)
    assert not source.read().presenting


JOB = """
import pathlib, subprocess, sys, time
here = pathlib.Path(sys.argv[1])
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
(here / "started").write_text(str(__import__("os").getpid()))
while not (here / "go").exists():
    time.sleep(0.05)
child.kill()
print("done")
"""


def tree_states(pid: int) -> set[str]:
    try:
        root = psutil.Process(pid)
        found = set()
        for process in [root, *root.children(recursive=True)]:
            stat = Path(f"/proc/{process.pid}/stat").read_text()
            found.add(stat.rsplit(")", 1)[1].split()[0])
        return found
    except (psutil.Error, OSError):
        return set()


def cli(env: dict[str, str], *args: str, check: bool = True) -> Any:
    done = subprocess.run([*APP, *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 or not check, f"{args}: {done.stderr}"
    return json.loads(done.stdout) if "--json" in args else done.stdout


def test_it_starts_only_once_nobody_types_and_pauses_the_whole_tree_on_a_key(
    tmp_path: Path, spawn: Spawn, gnome_idle: GnomeIdle, typist: Typist
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {**child_env(tmp_path), "DOMI_DATA_DIR": str(data)}
    env = {k: v for k, v in env.items() if not k.startswith("FAKETIME")}
    script = tmp_path / "job.py"
    script.write_text(JOB)
    app = spawn([*APP, "--headless"], env={"DOMI_DATA_DIR": str(data)})
    wait_for(
        lambda: cli(env, "status", "--json", check=False).get("running"),
        WAIT,
        "the app on its socket",
    )
    gnome_idle.inhibit(True)  # a video plays: present, however long nobody types
    added = cli(
        env, "schedule", "add", "Index photos", "--cron", "* * * * *", "--tz", "UTC",
        "--when-away", str(AWAY_MINUTES), "--json", "--", sys.executable, str(script),
        str(tmp_path),
    )  # fmt: skip
    schedule = str(added["id"])

    def runs() -> list[dict[str, Any]]:
        return list(reversed(cli(env, "runs", "--schedule", schedule, "--json")))

    wait_for(lambda: bool(runs()), WAIT + 60, "the first due")
    (waiting,) = runs()
    assert waiting["status"] == "waiting"
    assert waiting["reason"] == "waiting for you to step away"
    time.sleep(10)  # well past the threshold with no input: the inhibitor alone holds it
    assert not (tmp_path / "started").exists()

    typist.start()  # at the computer: input younger than the threshold all along
    gnome_idle.inhibit(False)
    time.sleep(10)
    assert not (tmp_path / "started").exists()
    typist.stop()
    stopped_typing = typist.last
    wait_for((tmp_path / "started").exists, WAIT, "the start once nobody types")
    print(f"start {time.monotonic() - stopped_typing:.1f} s after the last key (threshold 6 s)")
    pid = int((tmp_path / "started").read_text())
    wait_for(lambda: len(tree_states(pid)) >= 1, WAIT, "the job's tree")

    typist.press()  # back
    pressed = typist.last
    wait_for(lambda: tree_states(pid) == {"T"}, WAIT, "every process of the tree stopped")
    print(f"tree paused {time.monotonic() - pressed:.2f} s after the key")
    assert len(psutil.Process(pid).children(recursive=True)) == 1
    time.sleep(2)
    assert tree_states(pid) == {"T"}
    wait_for(lambda: "T" not in tree_states(pid), WAIT, "the tree going on at the next away")
    print(f"tree resumed {time.monotonic() - pressed:.1f} s after the last key (threshold 6 s)")

    (tmp_path / "go").touch()
    wait_for(lambda: runs()[0]["status"] == "succeeded", WAIT, "the run's end")
    ran = runs()[0]
    assert ran["reason"].startswith("started after waiting ")
    assert "for you to step away; paused once, " in ran["reason"], ran["reason"]
    started = [run for run in runs() if run["status"] in ("running", "succeeded")]
    assert len(started) == 1
    assert "Traceback" not in app.stderr()
    assert os.environ.get("DISPLAY")


DEADLINE = 20
"""Seconds the deadline test's run waits for an away at most."""


def test_a_user_who_never_leaves_gets_exactly_one_run_at_the_deadline(
    tmp_path: Path, spawn: Spawn, gnome_idle: GnomeIdle, typist: Typist
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {**child_env(tmp_path), "DOMI_DATA_DIR": str(data)}
    env = {k: v for k, v in env.items() if not k.startswith("FAKETIME")}
    app = spawn([*APP, "--headless"], env={"DOMI_DATA_DIR": str(data)})
    wait_for(
        lambda: cli(env, "status", "--json", check=False).get("running"),
        WAIT,
        "the app on its socket",
    )
    typist.start()  # at the computer from before the due to well after the run
    # One due only, a minute or two ahead: a second due would make a second deadline run.
    due = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=2)
    job = "import time; time.sleep(1); print('indexed')"
    added = cli(
        env, "schedule", "add", "Index photos", "--cron", f"{due:%M %H %d %m} *", "--tz", "UTC",
        "--when-away", str(AWAY_MINUTES), "--wait-at-most", str(DEADLINE), "--json", "--",
        sys.executable, "-c", job,
    )  # fmt: skip
    schedule = str(added["id"])

    def runs() -> list[dict[str, Any]]:
        return list(cli(env, "runs", "--schedule", schedule, "--json"))

    wait_for(lambda: bool(runs()), WAIT + 150, "the due")
    assert runs()[0]["status"] == "waiting"
    wait_for(lambda: runs()[0]["status"] == "succeeded", WAIT + DEADLINE, "the deadline run's end")
    assert time.monotonic() - typist.last < 2  # typed all along
    time.sleep(10)  # still typing: nothing else starts
    (ran,) = runs()
    started = datetime.fromisoformat(str(ran["started_at"]))
    print(f"started {(started - due).total_seconds():.1f} s after the due (deadline {DEADLINE} s)")
    assert due + timedelta(seconds=DEADLINE) <= started < due + timedelta(seconds=DEADLINE + 5)
    assert ran["reason"] == f"ran anyway after waiting {DEADLINE} seconds for you to step away", ran
    assert "Traceback" not in app.stderr()
