"""The app's socket as clients meet it: a real headless daemon, real sockets, real processes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc.instance import socket_name
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.support.processes import killed_if_unready, stop

pytestmark = pytest.mark.slow

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
"""One that user nobody may run (the test's own may live in root's home)."""


def env_for(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(DOMI_DATA_DIR=str(data), QT_QPA_PLATFORM="offscreen")
    env["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={data}/no-such-bus"
    return env


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", *args],
        capture_output=True, text=True, env=env_for(data), timeout=60,
    )  # fmt: skip


def running(data: Path) -> bool:
    done = cli(data, "status", "--json")
    return done.returncode == 0 and json.loads(done.stdout)["running"] is True


def start_daemon(data: Path, *, max_files: int | None = None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "domi_desktop", "--headless"]
    if max_files is not None:
        command = [sys.executable, "-c", LIMITED, str(max_files), *command]
    with (data / "daemon.stderr").open("ab") as stderr:
        process = subprocess.Popen(
            command, env=env_for(data), stdout=subprocess.DEVNULL, stderr=stderr
        )  # fmt: skip
    with killed_if_unready(process):
        wait_for(lambda: running(data), EVENT_DEADLINE, "the daemon's socket")
    return process


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        yield process
    finally:
        assert stop(process) == 0


def half_closed(data: Path, payload: bytes) -> list[Any]:
    """What ``printf PAYLOAD | socat - UNIX-CONNECT:…`` prints: send, EOF, read to the end."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(socket_name(data))
        client.sendall(payload)
        client.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    return [json.loads(line) for line in received.splitlines()]


def test_a_half_closed_client_gets_every_answer_even_a_last_line_without_newline(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    (status,) = half_closed(data, b'{"jsonrpc":"2.0","id":1,"method":"app.status"}\n')
    assert status["id"] == 1 and status["result"]["pid"] == daemon.pid
    answers = half_closed(
        data,
        b'{"jsonrpc":"2.0","id":1,"method":"schedule.list"}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"app.status"}',
    )
    assert [a["id"] for a in answers] == [1, 2]
    assert half_closed(data, b'{"jsonrpc":"2.0","id":3,"method":"app.st') == []  # cut off
    assert running(data)


def test_json_rpc_edges_are_answered_with_the_right_codes(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    status = {"jsonrpc": "2.0", "method": "app.status"}
    (too_big,) = half_closed(data, json.dumps([{**status, "id": i} for i in range(101)]).encode())
    assert too_big["error"]["code"] == -32600 and "101" in too_big["error"]["message"]
    assert too_big["id"] is None
    (exactly,) = half_closed(data, json.dumps([{**status, "id": i} for i in range(100)]).encode())
    assert [a["id"] for a in exactly] == list(range(100))

    ids = half_closed(data, b"".join(json.dumps({**status, "id": i}).encode() + b"\n"
                                     for i in ({"a": 1}, [1], True)))  # fmt: skip
    assert [a["error"]["code"] for a in ids] == [-32600] * 3

    huge = half_closed(
        data,
        b'{"jsonrpc":"2.0","id":1,"method":"schedule.get","params":{"id":12345678901234567890}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"schedule.runs","params":{"id":1,"limit":1e999}}\n'
        b'{"jsonrpc":"2.0","id":3,"method":"schedule.create","params":{"name":"x",'
        b'"expr":"* * * * *","action":{"kind":"command","argv":["true"],"timeout":-9e99999}}}\n',
    )
    assert [a["error"]["code"] for a in huge] == [-32602] * 3
    assert [a["error"]["data"]["param"] for a in huge] == ["id", "limit", "action.timeout"]
    assert huge[0]["error"]["message"].startswith("id: 12345678901234567890 is out of range")

    (mismatch,) = half_closed(
        data, b'{"jsonrpc":"2.0","id":1,"method":"app.hello","params":{"protocol":99}}'
    )
    assert mismatch["error"]["code"] == -32001
    assert "version 99" in mismatch["error"]["message"]
    assert "version 1" in mismatch["error"]["message"]
    (hello,) = half_closed(
        data, b'{"jsonrpc":"2.0","id":1,"method":"app.hello","params":{"protocol":1}}'
    )
    assert hello["result"]["protocol"] == 1


def test_a_run_now_with_wait_inside_a_batch_is_answered_with_the_others(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    assert cli(data, "schedule", "add", "t", "--cron", "0 0 1 1 *", "--", "true").returncode == 0
    batch = [
        {"jsonrpc": "2.0", "id": "wait", "method": "schedule.run_now",
         "params": {"id": 1, "wait": True}},
        {"jsonrpc": "2.0", "method": "app.status"},  # a notification: no answer
        {"jsonrpc": "2.0", "id": "list", "method": "schedule.list"},
    ]  # fmt: skip
    (answers,) = half_closed(data, json.dumps(batch).encode() + b"\n")
    by_id = {a["id"]: a for a in answers}
    assert set(by_id) == {"wait", "list"}
    assert by_id["wait"]["result"]["status"] == "succeeded"


def test_a_flood_of_idle_clients_never_loses_the_listener(data: Path) -> None:
    # Low limit (the issue saw it at 1024 with ~1,010 clients): a cap of a quarter of it holds.
    process = start_daemon(data, max_files=160)
    idle: list[socket.socket] = []
    try:
        while len(idle) < 400:
            client = socket.socket(socket.AF_UNIX)
            client.settimeout(5)
            try:
                client.connect(socket_name(data))
            except BlockingIOError:  # the listen backlog is full: let the app accept
                client.close()
                time.sleep(0.01)
                continue
            idle.append(client)
        time.sleep(1)
        assert Path(socket_name(data)).exists()
        assert running(data)
        fds = len(os.listdir(f"/proc/{process.pid}/fd"))
        assert fds < 160
    finally:
        for client in idle:
            client.close()
        assert stop(process) == 0
    log = (data / "domi-desktop.log").read_text()
    assert "dropping the oldest idle ones" in log


def test_the_cli_refuses_a_socket_squatted_by_another_user_and_sends_it_nothing(
    data: Path,
) -> None:
    if os.getuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip("needs root and a system python to run a listener as another user")
    path = Path(socket_name(data))
    # Somewhere nobody can reach (pytest's tmp_path is root's 0700); same file system as path.
    staging = Path(tempfile.mkdtemp(dir=path.parent.parent))
    os.chown(staging, NOBODY, NOBODY)
    heard = staging / "heard"
    squatter = subprocess.Popen(
        [SYSTEM_PYTHON, "-c", SQUATTER, str(staging / "s.sock"), str(heard)],
        user=NOBODY, group=NOBODY, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert squatter.stdout is not None and squatter.stdout.readline() == b"listening\n"
        os.rename(staging / "s.sock", path)  # the socket keeps its owner, nobody
        done = cli(data, "status")
        assert done.returncode == 2, done.stdout
        assert "refusing to talk to" in done.stderr and f"uid {NOBODY}" in done.stderr
        assert "not running" not in done.stdout
    finally:
        stop(squatter)
        squatter.communicate()  # closes its pipe
        path.unlink(missing_ok=True)
        received = heard.read_bytes()
        shutil.rmtree(staging)
    assert received == b""


LIMITED = """
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[1])))
os.execv(sys.argv[2], sys.argv[2:])
"""

SQUATTER = """
import socket, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen()
print("listening", flush=True)
with open(sys.argv[2], "wb") as heard:
    while True:
        client, _ = server.accept()
        client.settimeout(2)
        try:
            heard.write(client.recv(65536))
        except TimeoutError:
            pass
        heard.flush()
        client.close()
"""
