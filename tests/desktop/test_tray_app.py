"""The real tray app as a child process under Xvfb, with a fake desktop and a fake logind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc.instance import socket_name
from tests.desktop.harness import Child, FakeDesktop, FakeLogind, Spawn
from tests.support.fakes import wait_for

pytestmark = pytest.mark.gui

APP = [sys.executable, "-m", "domi_desktop"]
WAIT = 60
"""Seconds a test waits for what it checks: generous, for loaded machines (no figures here)."""


def cli(data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOMI_DATA_DIR": str(data)}
    done = subprocess.run([*APP, *args], capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def status(data: Path) -> dict[str, Any]:
    return json.loads(cli(data, "status", "--json", check=False).stdout)  # type: ignore[no-any-return]


def settle(data: Path) -> None:
    """Wait until the app's loop has dealt with the wake: a socket round trip is served only after
    the events queued before it, and the notifier sends in order on one thread."""
    assert status(data)["running"]
    assert status(data)["last_wake"] is not None


def asleep_three_days(data: Path) -> None:
    """As if the laptop had been closed for three days since each schedule's last fire."""
    with closing(sqlite3.connect(data / "domi.sqlite3")) as db, db:
        db.execute("UPDATE schedules SET last_due = last_due - 3 * 86400 * 1000000")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def due_text(hour: int) -> str:
    """How a late notice writes the latest ``hour``:00 UTC due (the app's clock is UTC here): with
    its day when that was not today."""
    now = datetime.now(UTC)
    if now.hour >= hour:
        return f"{hour:02d}:00"
    return f"{(now - timedelta(days=1)):%a} {hour:02d}:00"


def start_app(spawn: Spawn, data: Path) -> Child:
    child = spawn(APP, env={"DOMI_DATA_DIR": str(data)})
    wait_for(lambda: status(data).get("running"), WAIT, "the app to answer on its socket")
    return child


def test_the_tray_registers_and_a_late_catch_up_gives_one_honest_notification(
    spawn: Spawn, fake_desktop: FakeDesktop, data: Path
) -> None:
    cli(data, "schedule", "add", "Rate-limit report", "--cron", "0 9 * * *", "--tz", "UTC",
        "--", "true")  # fmt: skip
    cli(
        data,
        "schedule",
        "add",
        "Nightly backup",
        "--cron",
        "0 2 * * *",
        "--tz",
        "UTC",
        "--",
        "true",
    )
    asleep_three_days(data)  # both owe one late run, each with 2 earlier dues skipped
    start_app(spawn, data)
    fake_desktop.wait_for("RegisterStatusNotifierItem", timeout=WAIT)
    (notify,) = fake_desktop.wait_for("Notify", timeout=WAIT)
    app_name, _replaces, _icon, summary, body, actions, _hints, _timeout = notify["args"]
    assert app_name == "domi-desktop"
    # Caught up at start-up, not after a sleep: the app was not running meanwhile.
    assert summary == "2 schedules caught up after the app was closed"
    assert (
        f"Rate-limit report: due {due_text(9)}, ran " in body and "2 earlier runs skipped" in body
    )
    assert f"Nightly backup: due {due_text(2)}" in body
    assert actions[0] == "default"
    settle(data)
    assert len(fake_desktop.calls("Notify")) == 1, "one notification for all catch-ups of a wake"


def test_one_late_schedule_is_named_in_the_title_and_a_click_opens_the_history(
    spawn: Spawn, fake_desktop: FakeDesktop, data: Path
) -> None:
    cli(
        data,
        "schedule",
        "add",
        "Rate-limit report",
        "--cron",
        "0 9 * * *",
        "--tz",
        "UTC",
        "--",
        "true",
    )
    asleep_three_days(data)
    child = start_app(spawn, data)
    (notify,) = fake_desktop.wait_for("Notify", timeout=WAIT)
    summary, body = notify["args"][3], notify["args"][4]
    assert summary == "Rate-limit report ran late"
    assert body.startswith(f"due {due_text(9)}, ran ") and body.endswith(
        " · 2 earlier runs skipped"
    )
    runs = json.loads(cli(data, "runs", "--json").stdout)
    (run_id,) = [r["id"] for r in runs if r["status"] != "skipped"]
    fake_desktop.invoke_action(1)  # the user clicks the notification
    opened = f"history window opened from a notification (run {run_id})"
    wait_for(lambda: opened in child.stderr(), WAIT, "the history to open on that run")


def test_prepare_for_sleep_false_wakes_the_scheduler_at_once(
    spawn: Spawn, fake_desktop: FakeDesktop, fake_logind: FakeLogind, data: Path
) -> None:
    start_app(spawn, data)
    wait_for(lambda: (status(data).get("last_wake") or {}).get("reason") == "start", WAIT, "start")
    fake_logind.prepare_for_sleep(True)
    fake_logind.prepare_for_sleep(False)
    # The wake's reason tells it from the 60 s timer's (a timer wake), whenever it comes.
    wait_for(lambda: status(data)["last_wake"]["reason"] == "resume", WAIT, "the resume wake")


def test_rpc_round_trips_and_garbage_never_stop_the_app(
    spawn: Spawn, fake_desktop: FakeDesktop, data: Path
) -> None:
    import socket as sockets

    start_app(spawn, data)
    name = socket_name(data)

    def exchange(payload: bytes, *, read: bool = True) -> list[dict[str, Any]]:
        with closing(sockets.socket(sockets.AF_UNIX)) as client:
            client.settimeout(5)
            client.connect(name)
            try:
                client.sendall(payload)
            except (BrokenPipeError, ConnectionResetError):
                assert not read, "the app dropped a well-behaved client"
                return []  # a flooder is dropped: that is the point
            if not read:
                return []
            received = b""
            while received.count(b"\n") < payload.count(b"\n"):
                chunk = client.recv(65536)
                if not chunk:
                    break
                received += chunk
            return [json.loads(line) for line in received.splitlines()]

    params = {"name": "via rpc", "expr": "*/5 * * * *", "tz": "UTC",
              "action": {"kind": "command", "argv": ["true"]}}  # fmt: skip
    request = {"jsonrpc": "2.0", "id": 1, "method": "schedule.create", "params": params}
    created = exchange(json.dumps(request).encode() + b"\n")[0]
    assert created["result"]["name"] == "via rpc" and created["result"]["next_run"]
    listed = exchange(b'{"jsonrpc":"2.0","id":2,"method":"schedule.list"}\n')[0]
    assert [s["name"] for s in listed["result"]] == ["via rpc"]
    preview = exchange(b'{"jsonrpc":"2.0","id":3,"method":"schedule.preview","params":'
                       b'{"expr":"0 9 * * 1-5","tz":"Asia/Shanghai","count":2}}\n')[0]  # fmt: skip
    assert preview["result"]["description"] == "At 09:00, Monday through Friday"
    assert len(preview["result"]["next"]) == 2
    errors = exchange(
        b"this is not json\n"
        b'{"jsonrpc":"2.0","id":5,"method":"no.such"}\n'
        b'{"jsonrpc":"2.0","id":6,"method":"schedule.create","params":{"name":"x","expr":"61 * * * *"}}\n'
        b'{"jsonrpc":"2.0","id":7,"method":"schedule.get","params":{"id":999}}\n'
        b"[1,2]\n"
    )
    assert errors[0]["error"]["code"] == -32700
    assert errors[1]["error"]["code"] == -32601
    assert errors[2]["error"]["code"] == -32602 and "expr" in errors[2]["error"]["message"]
    assert errors[2]["error"]["message"] == "expr: minute: 61 is out of range 0-59"
    assert errors[3]["error"]["code"] == -32004
    assert [e["error"]["code"] for e in errors[4]] == [-32600, -32600]  # type: ignore[index]
    exchange(b'{"jsonrpc":"2.0","id":8,"method":"schedule.li', read=False)  # gone mid-line
    exchange(b"x" * (3 << 20), read=False)  # a flood without a newline
    exchange(bytes(range(256)) * 100 + b"\n", read=False)
    assert status(data)["running"] is True
    assert cli(data, "schedule", "list", "--json").stdout.count("via rpc") == 1


def test_cli_edits_go_through_the_running_app(
    spawn: Spawn, fake_desktop: FakeDesktop, data: Path
) -> None:
    start_app(spawn, data)
    schedule_id = int(
        cli(data, "schedule", "add", "echo", "--cron", "0 9 * * *", "--", "true").stdout
    )
    assert status(data)["schedules"] == 1
    run = json.loads(cli(data, "run-now", str(schedule_id), "--json").stdout)
    assert run["status"] == "succeeded" and run["trigger"] == "manual"


def test_a_second_launch_shows_the_first_and_exits_0(
    spawn: Spawn, fake_desktop: FakeDesktop, data: Path
) -> None:
    first = start_app(spawn, data)
    second = spawn(APP, env={"DOMI_DATA_DIR": str(data)})
    assert second.process.wait(timeout=WAIT) == 0
    assert first.process.poll() is None
    assert status(data)["pid"] == first.pid


def test_the_first_start_makes_its_data_folder(
    spawn: Spawn, fake_desktop: FakeDesktop, tmp_path: Path
) -> None:
    data = tmp_path / "home" / "share" / "domi-desktop"  # none of it there yet
    child = start_app(spawn, data)
    assert (data / "domi.sqlite3").is_file()
    assert "stopping" in cli(data, "quit").stdout
    assert child.process.wait(timeout=WAIT) == 0


def test_sigterm_stops_it_cleanly(spawn: Spawn, fake_desktop: FakeDesktop, data: Path) -> None:
    child = start_app(spawn, data)
    child.process.send_signal(signal.SIGTERM)
    assert child.process.wait(timeout=WAIT) == 0
    assert not status(data).get("running")


def test_quit_stops_it_cleanly(spawn: Spawn, fake_desktop: FakeDesktop, data: Path) -> None:
    child = start_app(spawn, data)
    assert "stopping" in cli(data, "quit").stdout
    assert child.process.wait(timeout=WAIT) == 0
    assert cli(data, "status", check=False).returncode == 3
