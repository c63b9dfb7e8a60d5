"""Fixtures for the action tests: a runner, requests with their own log, a real local HTTP server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest

from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.clock import SystemClock
from domi_desktop.model import Action

MakeRequest = Callable[..., ActionRequest]
WaitUntil = Callable[[Callable[[], bool]], None]


@pytest.fixture
def runner() -> Iterator[ActionRunner]:
    """A runner whose jobs are stopped (their whole trees) when the test ends, failed or not: a
    failed burst test once left 200 polling jobs running for 27 minutes."""
    made = ActionRunner(SystemClock())
    yield made
    stopped_all(made)


def stopped_all(runner: ActionRunner) -> None:
    """Stop every job ``runner`` still runs and wait for each to end (killed if it will not)."""
    for running in runner.stop_all("stopped: the test ended"):
        pid = running.pid
        if running.wait(30) is None and pid is not None and sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the job leads its own group


@pytest.fixture
def make_request(tmp_path: Path) -> MakeRequest:
    """``make_request(action, run_id=1, timeout=None, secrets=None)``; the log goes to tmp_path."""

    def make(
        action: Action,
        run_id: int = 1,
        timeout: float | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> ActionRequest:
        return ActionRequest(
            action=action,
            run_id=run_id,
            log_path=tmp_path / "logs" / f"{run_id}.log",
            timeout=None if timeout is None else timedelta(seconds=timeout),
            secrets=secrets or {},
        )

    return make


@pytest.fixture
def wait_until() -> WaitUntil:
    """Poll ``condition`` every 10 ms for up to 60 s (generous: loaded machines); fail the test
    if it never holds."""

    def wait(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail("the condition did not hold within 60 s")
            time.sleep(0.01)

    return wait


def is_gone(pid: int) -> bool:
    """True when ``pid`` has exited. A zombie counts as gone: this container's PID 1 never reaps
    orphans, so a killed grandchild stays a zombie forever."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def gone() -> Callable[[int], bool]:
    return is_gone


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class TestServer:
    """A real HTTP server on 127.0.0.1; ``received`` lists the requests it got."""

    __test__ = False  # not a test class

    url: str
    received: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    """Set to let the ``/slow`` handler answer (teardown sets it)."""
    answered: list[str] = field(default_factory=list)
    """The paths of the ``/slow`` requests answered (after ``release``, or a minute)."""


def _handler(server_state: TestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep the test output quiet

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            server_state.received.append(
                Received(self.command, self.path, dict(self.headers.items()), body)
            )
            path, _, query = self.path.partition("?")
            if path == "/ok":
                self._reply(200, b"hello from the server\n")
            elif path == "/unavailable":
                self._reply(503, b"try again later\n")
            elif path == "/echo":
                echo = {"headers": dict(self.headers.items()), "body": body.decode()}
                self._reply(200, json.dumps(echo).encode(), "application/json")
            elif path == "/big":
                self._reply(200, b"".join(b"%05d\n" % i for i in range(2000)))
            elif path == "/latin1":
                self._reply(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
            elif path == "/slow":
                server_state.release.wait(60)
                server_state.answered.append(path)
                self._reply(200, b"late\n")
            elif path == "/redirect":
                self.send_response(302)
                self.send_header("Location", unquote(query))
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._reply(404, b"not found\n")

        def _reply(self, status: int, body: bytes, kind: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def http_server_factory() -> Iterator[Callable[[], TestServer]]:
    servers: list[tuple[ThreadingHTTPServer, threading.Thread, TestServer]] = []

    def start() -> TestServer:
        state = TestServer(url="")
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        servers.append((server, thread, state))
        return state

    yield start
    for server, thread, state in servers:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def http_server(http_server_factory: Callable[[], TestServer]) -> TestServer:
    return http_server_factory()
