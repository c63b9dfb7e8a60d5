"""An attack on the front door, through the CLI as a subprocess and the app's socket: text
that is not text, a crowd of subscribers, a frozen app, the human ``status``, an unwritable log."""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc.instance import socket_name
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.system.test_rpc_socket import cli, env_for, half_closed, start_daemon

pytestmark = [pytest.mark.slow, pytest.mark.posix_only]  # Unix sockets, SIGSTOP, select on pipes

NOT_UTF8 = "caf\udce9"
"""A Latin-1 byte in a command line: POSIX Python reads it as a lone surrogate (U+DCE9), as
``os.fsdecode(b"caf\xe9")``; spelt out, since Windows decodes no byte so (its argv is UTF-16)."""


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGCONT)  # a test that stopped it may have failed meanwhile
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def add(data: Path, name: str, *command: str) -> subprocess.CompletedProcess[str]:
    return cli(data, "schedule", "add", name, "--cron", "0 0 1 1 *", "--json", "--", *command)


def names(data: Path) -> list[str]:
    done = cli(data, "schedule", "list", "--json")
    assert done.returncode == 0, done.stderr
    return [schedule["name"] for schedule in json.loads(done.stdout)]


def refused_naming(done: subprocess.CompletedProcess[str], field: str) -> None:
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"domi-desktop: {field}: is not valid text"), line


def test_text_that_is_not_utf8_is_refused_naming_the_field_with_or_without_the_app(
    data: Path,
) -> None:
    refused_naming(add(data, NOT_UTF8, "true"), "name")
    refused_naming(add(data, "ok", "echo", NOT_UTF8), "action.argv[1]")
    process = start_daemon(data)
    try:
        refused_naming(add(data, NOT_UTF8, "true"), "name")
        (answer,) = half_closed(
            data,
            b'{"jsonrpc":"2.0","id":1,"method":"schedule.create","params":{"name":"\\ud800",'
            b'"expr":"* * * * *","action":{"kind":"command","argv":["true"]}}}\n',
        )
        assert answer["error"]["code"] == -32602
        assert answer["error"]["data"] == {"param": "name"}
        (unknown,) = half_closed(data, b'{"jsonrpc":"2.0","id":2,"method":"\\udcff"}\n')
        assert unknown["error"]["code"] == -32601 and unknown["id"] == 2
        assert names(data) == []
    finally:
        process.terminate()
        process.wait(timeout=20)


def subscribe(path: str) -> socket.socket:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(30)
    client.connect(path)
    client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"events.subscribe"}\n')
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = client.recv(65536)
        assert chunk, "the app closed a new subscriber before answering it"
        answer += chunk
    assert json.loads(answer)["result"]["subscribed"] is True
    return client


def next_event(client: socket.socket) -> dict[str, Any] | None:
    """The next line the app sends this subscriber; None once the app has closed it."""
    received = b""
    while not received.endswith(b"\n"):
        chunk = client.recv(65536)
        if not chunk:
            return None
        received += chunk
    message: dict[str, Any] = json.loads(received.splitlines()[0])
    return message


def test_a_crowd_of_subscribers_never_locks_request_clients_out(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    assert add(data, "heard", "true").returncode == 0
    follower = subprocess.Popen(
        [sys.executable, "-m", "domi_desktop", "events", "--follow"],
        env=env_for(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    crowd: list[socket.socket] = []
    try:

        def heard() -> bool:
            assert cli(data, "run-now", "1").returncode == 0
            ready, _, _ = select.select([follower.stdout], [], [], 5)
            return bool(ready)

        # It is the oldest subscriber now.
        wait_for(heard, EVENT_DEADLINE, "the follower to hear a run")
        crowd = [subscribe(socket_name(data)) for _ in range(80)]
        done = cli(data, "status", "--json")
        assert done.returncode == 0 and json.loads(done.stdout)["running"] is True, done.stderr
        assert add(data, "after the crowd", "true").returncode == 0
        assert names(data) == ["heard", "after the crowd"]
        # The newest subscriber hears the run; the oldest were let go to make room, told why.
        assert cli(data, "run-now", "2").returncode == 0
        event = next_event(crowd[-1])
        assert event is not None and event["method"] == "schedule.fire"
        goodbye = next_event(crowd[0])
        assert goodbye is not None and goodbye["method"] == "events.closed"
        assert next_event(crowd[0]) is None
        assert follower.wait(timeout=EVENT_DEADLINE) == 1
        assert follower.stderr is not None
        (said,) = follower.stderr.read().splitlines()
        assert said.startswith("domi-desktop: the app ended the event stream: more than")
    finally:
        follower.kill()
        follower.communicate()
        for client in crowd:
            client.close()


def test_a_frozen_app_is_noticed_and_the_cli_uses_the_database(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    assert add(data, "before", "true").returncode == 0
    daemon.send_signal(signal.SIGSTOP)
    listed = cli(data, "schedule", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["name"] for s in json.loads(listed.stdout)] == ["before"]
    assert "did not answer" in listed.stderr and "using the database directly" in listed.stderr
    assert add(data, "while frozen", "true").returncode == 0
    status = cli(data, "status", "--json")
    assert status.returncode == 3
    shown = json.loads(status.stdout)
    assert shown["running"] is None and "did not answer" in shown["unreachable"]
    daemon.send_signal(signal.SIGCONT)
    wait_for(
        lambda: cli(data, "status", "--json").returncode == 0,
        EVENT_DEADLINE,
        "the app answering again",
    )
    assert names(data) == ["before", "while frozen"]
    assert "did not answer" not in cli(data, "schedule", "list").stderr


def test_status_in_human_form_shows_a_running_app(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    done = cli(data, "status")
    assert done.returncode == 0, done.stderr
    assert f"pid {daemon.pid}" in done.stdout and "next wake" in done.stdout


def test_a_log_file_that_cannot_be_written_is_said_in_one_line_not_tracebacks(
    data: Path,
) -> None:
    (data / "domi-desktop.log").symlink_to("/dev/full")  # every write: no space left on device
    process = start_daemon(data)
    assert add(data, "logged", "true").returncode == 0
    process.terminate()
    assert process.wait(timeout=EVENT_DEADLINE) == 0
    stderr = (data / "daemon.stderr").read_text()
    assert "Traceback" not in stderr and "Logging error" not in stderr
    (notice,) = [line for line in stderr.splitlines() if "cannot write the log" in line]
    assert "No space left on device" in notice
    assert "wake (start)" in stderr  # the log goes on to stderr


def test_an_app_that_hangs_up_before_its_hello_is_said_and_the_cli_uses_the_database(
    data: Path,
) -> None:
    # An app crashing as it accepts, say: the socket takes the connection and closes it.
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_name(data))
    listener.listen()
    stop = threading.Event()

    def hang_up() -> None:
        while not stop.is_set():
            with suppress(OSError):
                client, _ = listener.accept()
                client.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        added = add(data, "written directly", "true")
        assert added.returncode == 0, added.stderr
        assert "cannot send to the app" in added.stderr or (
            "closed the connection before answering app.hello" in added.stderr
        )
        assert "using the database directly" in added.stderr
        assert names(data) == ["written directly"]
    finally:
        stop.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)
        Path(socket_name(data)).unlink()
