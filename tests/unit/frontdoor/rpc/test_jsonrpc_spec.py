"""The JSON-RPC 2.0 specification's section 7, request by request, with the app's own methods where
the specification uses ``subtract``/``sum``: in-process through the dispatcher, and over the socket of
a running headless app. Plus ids that Python reads but JSON cannot write back (``1e400``, ``NaN``).
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.frontdoor.rpc import protocol
from domi_desktop.frontdoor.rpc.dispatch import Dispatcher, Responder
from domi_desktop.frontdoor.rpc.instance import socket_name
from domi_desktop.frontdoor.service import METHODS, Service
from domi_desktop.store import Store
from tests.support.fakes import FakeClock
from tests.system.test_rpc_socket import start_daemon
from tests.unit.frontdoor.test_service import NOW, Peer

AFTER = "2026-01-01T00:00:00+00:00"
PREVIEW = ["0 9 * * *", "UTC", 2, AFTER]
"""``schedule.preview`` by position, in the place of the specification's ``subtract``."""


def rpc(method: str, params: Any = None, request_id: Any = None, **extra: Any) -> dict[str, Any]:
    """A request; a notification when ``request_id`` is None."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, **extra}
    if params is not None:
        message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    return message


def line(value: Any) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


RESULT = "result"
Expected = tuple[Any, int | str] | list[tuple[Any, int | str]] | None
"""One answer as (id, error code or ``RESULT``), a batch's answers, or no answer at all."""

CASES: list[tuple[str, bytes, Expected]] = [
    ("positional params", line(rpc("schedule.preview", PREVIEW, 1)), (1, RESULT)),
    (
        "named params",
        line(rpc("schedule.preview", {"expr": "0 9 * * *", "tz": "UTC", "count": 2}, 3)),
        (3, RESULT),
    ),
    ("a notification", line(rpc("app.status", [])), None),
    ("a notification of an unknown method", line(rpc("no.such.method")), None),
    ("a method that does not exist", line(rpc("no.such.method", request_id="1")), ("1", -32601)),
    ("invalid JSON", b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', (None, -32700)),
    ("an invalid request object", line({"jsonrpc": "2.0", "method": 1, "params": "bar"}), (None, -32600)),
    (
        "a batch with invalid JSON",
        b'[{"jsonrpc": "2.0", "method": "schedule.preview", "params": [1,2,4], "id": "1"},'
        b'{"jsonrpc": "2.0", "method"]',
        (None, -32700),
    ),
    ("an empty array", b"[]", (None, -32600)),
    ("an invalid batch of one", b"[1]", [(None, -32600)]),
    ("an invalid batch", b"[1,2,3]", [(None, -32600)] * 3),
    (
        "a mixed batch",
        line([
            rpc("schedule.preview", PREVIEW, "1"),
            rpc("schedule.get", [7]),  # a notification that fails: still no answer
            rpc("schedule.list", [], "2"),
            {"foo": "boo"},
            rpc("no.such.method", {"name": "myself"}, "5"),
            rpc("app.status", request_id="9"),
        ]),
        [("1", RESULT), ("2", RESULT), (None, -32600), ("5", -32601), ("9", RESULT)],
    ),
    ("a batch of notifications", line([rpc("app.status", []), rpc("schedule.get", [7])]), None),
    ("an id of 1e400", b'{"jsonrpc":"2.0","id":1e400,"method":"app.status"}', (None, -32600)),
    ("an id of NaN", b'{"jsonrpc":"2.0","id":NaN,"method":"app.status"}', (None, -32600)),
    ("an id of -Infinity", b'{"jsonrpc":"2.0","id":-Infinity,"method":"app.status"}', (None, -32600)),
    ("too many by position", line(rpc("schedule.get", [1, 2], 4)), (4, -32602)),
]  # fmt: skip


def strict_json(text: bytes) -> Any:
    """JSON as the specification has it: no NaN, no Infinity."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"the app wrote {constant}, which is not JSON: {text!r}")

    return json.loads(text, parse_constant=refuse)


def shape(answers: list[Any]) -> Expected:
    """What the app sent back, as ``Expected``; batches in a canonical order (the specification
    lets a server answer a batch in any order)."""
    if not answers:
        return None
    (answer,) = answers

    def one(reply: dict[str, Any]) -> tuple[Any, int | str]:
        assert reply["jsonrpc"] == "2.0" and ("result" in reply) != ("error" in reply), reply
        return reply["id"], RESULT if "result" in reply else reply["error"]["code"]

    if isinstance(answer, list):
        return sorted((one(reply) for reply in answer), key=repr)
    return one(answer)


def expected_shape(expected: Expected) -> Expected:
    return sorted(expected, key=repr) if isinstance(expected, list) else expected


@pytest.fixture
def dispatcher(tmp_path: Path) -> Iterator[Dispatcher[Peer]]:
    clock = FakeClock(NOW)
    with Store.open(tmp_path / "data", now=clock.now()) as store:
        service = Service(store, clock)
        methods = {name: (lambda p, m=method: m(service, p)) for name, method in METHODS.items()}

        def status(_peer: Peer, _params: Mapping[str, Any], _respond: Responder) -> Any:
            return {"running": True}

        yield Dispatcher(methods, {"app.status": status})


def through(dispatcher: Dispatcher[Peer]) -> Callable[[bytes], list[Any]]:
    def send(request: bytes) -> list[Any]:
        peer = Peer()
        dispatcher.handle_line(peer, request)
        assert peer.owed == 0
        return [strict_json(json.dumps(sent).encode()) for sent in peer.sent]

    return send


@pytest.mark.parametrize(
    ("request_bytes", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_dispatcher_answers_as_the_specification_says(
    dispatcher: Dispatcher[Peer], request_bytes: bytes, expected: Expected
) -> None:
    assert shape(through(dispatcher)(request_bytes)) == expected_shape(expected)


def test_by_position_and_by_name_are_the_same_call(dispatcher: Dispatcher[Peer]) -> None:
    send = through(dispatcher)
    (by_position,) = send(line(rpc("schedule.preview", PREVIEW, 1)))
    names = dict(zip(protocol.POSITIONAL["schedule.preview"], PREVIEW, strict=False))
    (by_name,) = send(line(rpc("schedule.preview", names, 1)))
    assert by_position == by_name and len(by_name["result"]["next"]) == 2


def test_every_shared_method_can_be_called_by_position() -> None:
    assert set(METHODS) <= set(protocol.POSITIONAL)


@pytest.fixture(scope="module")
def app_socket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("spec") / "data"
    data.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("XDG_RUNTIME_DIR", raising=False)
        process = start_daemon(data)
        try:
            yield socket_name(data)
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def over_socket(path: str, request: bytes) -> list[Any]:
    """Send one line, half-close, read every line the app writes until it closes."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(30)
        client.connect(path)
        client.sendall(request + b"\n")
        client.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    return [strict_json(reply) for reply in received.splitlines()]


@pytest.mark.slow
@pytest.mark.posix_only  # a Unix socket; on Windows the app listens on a named pipe
@pytest.mark.parametrize(
    ("request_bytes", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_running_app_answers_as_the_specification_says(
    app_socket: str, request_bytes: bytes, expected: Expected
) -> None:
    assert shape(over_socket(app_socket, request_bytes)) == expected_shape(expected)
