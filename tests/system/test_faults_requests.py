"""Requests and faults: no request can stall the scheduler, and bad input is one line, exit 2."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.clock import SystemClock
from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.rpc.instance import socket_name
from domi_desktop.frontdoor.service import Service
from domi_desktop.scheduler import simulate as simulate_module
from domi_desktop.scheduler.simulate import MAX_WAKES, simulate
from tests.support.fakes import EVENT_DEADLINE, wait_for
from tests.support.processes import stop
from tests.system.test_rpc_socket import cli, half_closed, start_daemon

LAST = datetime(2020, 1, 1, tzinfo=UTC)
STEP = timedelta(days=3652) / MAX_WAKES
AT_THE_LIMIT = [(LAST + STEP * (i + 1)).isoformat() for i in range(MAX_WAKES)]
"""The most work a simulation may ask for: 1,000 wakes over ten years of ``* * * * *``."""


def service() -> Service:
    return Service(None, SystemClock())  # type: ignore[arg-type]  # these methods need no store


def refusal(method: str, params: dict[str, Any]) -> str:
    with pytest.raises(ParamError) as caught:
        getattr(service(), method)(params)
    return caught.value.param


def test_it_refuses_a_simulation_over_millennia_naming_the_parameter_without_doing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decided: list[object] = []
    monkeypatch.setattr(simulate_module, "decide", lambda *args: decided.append(args))
    with pytest.raises(ParamError) as caught:
        simulate("0 0 29 2 1", "Europe/Berlin", datetime(1900, 1, 1, tzinfo=UTC),
                 [datetime(8999, 1, 1, tzinfo=UTC)])  # fmt: skip
    assert caught.value.param == "wakes" and "ten years" in str(caught.value)
    assert decided == []  # refused before any wake was decided (it counted 42,415 dues, 6 s)


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"last_due": "0001-01-01T00:00:00+00:00", "wakes": ["2024-01-01T00:00:00Z"]}, "last_due"),
        ({"last_due": "2024-01-01T00:00:00Z", "wakes": ["9999-12-31T23:59:00-14:00"]}, "wakes[0]"),
        ({"last_due": "2024-01-01T00:00:00Z", "wakes": ["2024-01-02T00:00:00Z"] * 1001}, "wakes"),
        ({"last_due": "2024-01-01T00:00:00Z", "wakes": []}, "wakes"),
        (
            {"last_due": "2024-01-01T00:00:00Z",
             "wakes": ["2024-01-03T00:00:00Z", "2024-01-02T00:00:00Z"]},
            "wakes[1]",
        ),
    ],
)  # fmt: skip
def test_it_answers_an_unbounded_simulation_with_the_parameter_at_fault(
    params: dict[str, Any], param: str
) -> None:
    assert refusal("simulate", {"expr": "* * * * *", "tz": "UTC", **params}) == param


@pytest.mark.parametrize("after", ["9999-12-31T23:59:00-14:00", "0001-01-01T00:00:00+00:00"])
def test_it_refuses_a_preview_after_the_ends_of_the_calendar(after: str) -> None:
    params = {"expr": "0 0 29 2 1", "tz": "America/New_York", "after": after, "count": 1000}
    assert refusal("preview", params) == "after"


@pytest.fixture
def daemon(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_daemon(data)
    try:
        yield process
    finally:
        assert stop(process) == 0


def status_latency(data: Path) -> float:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(60)
        client.connect(socket_name(data))
        started = time.monotonic()
        client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"app.status"}\n')
        reply = b""
        while not reply.endswith(b"\n") and (chunk := client.recv(65536)):
            reply += chunk
        elapsed = time.monotonic() - started
    assert json.loads(reply)["result"]["running"] is True
    return elapsed


@pytest.mark.slow
def test_batches_of_heavy_simulations_never_hold_the_app(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    # Four clients with a batch of two each: 8 simulations at the limit, about 0.5 s of work
    # each. (A batch's answer is sent whole; two of these, 6 MB, fit the app's 8 MB per client.)
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "schedule.simulate",
         "params": {"expr": "* * * * *", "tz": "Europe/Berlin", "last_due": LAST.isoformat(),
                    "wakes": AT_THE_LIMIT}}
        for i in range(2)
    ]  # fmt: skip
    answers: list[Any] = []
    sent: list[int] = []

    def ask() -> None:
        # Read as it comes: the app drops a client that leaves megabytes of answers unread.
        received = bytearray()
        with socket.socket(socket.AF_UNIX) as heavy:
            heavy.settimeout(120)
            heavy.connect(socket_name(data))
            heavy.sendall(json.dumps(batch).encode() + b"\n")
            sent.append(1)
            while not received.endswith(b"\n") and (chunk := heavy.recv(1 << 20)):
                received.extend(chunk)
        answers.append(json.loads(received))

    clients = [threading.Thread(target=ask) for _ in range(4)]
    started = time.monotonic()
    for client in clients:
        client.start()
    wait_for(lambda: len(sent) == 4, EVENT_DEADLINE, "the batches to be in the app's hands")
    latencies = [status_latency(data) for _ in range(5)]
    batches_done = len(answers)  # when the last status came back
    for client in clients:
        client.join(EVENT_DEADLINE)
    took = time.monotonic() - started
    assert len(answers) == 4
    for answer in answers:
        assert sorted(a["id"] for a in answer) == [0, 1]
        assert all(len(a["result"]["wakes"]) == MAX_WAKES for a in answer)
    print(
        f"batches took {took:.1f}s, app.status answered in {max(latencies) * 1000:.0f} ms at most"
    )
    # Without the worker pool status waited for the batches asked before it; with it, only the
    # GIL's turn-taking with the pure-Python simulations stands between: answered while the work
    # was still going, not after it. The order of the events says so, not a duration.
    assert batches_done < 4


@pytest.mark.slow
def test_the_app_answers_an_unbounded_simulation_with_invalid_params(
    data: Path, daemon: subprocess.Popen[bytes]
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "schedule.simulate",
               "params": {"expr": "0 0 29 2 1", "tz": "UTC", "last_due": "1901-01-01T00:00:00Z",
                          "wakes": ["8999-01-01T00:00:00Z"]}}  # fmt: skip
    (answer,) = half_closed(data, json.dumps(request).encode() + b"\n")
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"] == {"param": "wakes"}


def one_line_exit_2(data: Path, *args: str) -> str:
    done = cli(data, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("schedule", "show", "99999999999999999999"),
        ("runs", "--schedule", "99999999999999999999"),
        ("run-now", "99999999999999999999"),
        ("schedule", "rm", "0"),
    ],
)
def test_an_id_sqlite_cannot_hold_is_one_line_exit_2(data: Path, args: tuple[str, ...]) -> None:
    assert "is not an id" in one_line_exit_2(data, *args)


@pytest.mark.slow
def test_a_simulation_from_year_1_to_9999_is_one_line_exit_2(data: Path) -> None:
    line = one_line_exit_2(data, "simulate", "0 0 29 2 1", "--tz", "UTC",
                           "--last-due", "0001-01-01T00:00Z", "--wake", "9999-01-01T00:00Z")  # fmt: skip
    assert line.startswith("domi-desktop: last_due: ")
