"""run-now waits for the end of its run as long as the run may last, not the 30 s of a call."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from domi_desktop.cli import commands
from domi_desktop.frontdoor.rpc.client import CALL_TIMEOUT, RpcClient, SilentApp

RUN = {"id": 7, "status": "succeeded", "reason": None, "output_tail": "", "log_path": "x"}


def test_the_wait_covers_every_attempt_and_backoff_and_a_margin() -> None:
    policies = {"timeout": 100.0, "retries": 2, "retry_backoff": 30.0}
    # Three attempts of 100 s, then backoffs of 30 s and 60 s between them.
    assert commands.run_wait(policies) == 300 + 90 + commands.RUN_NOW_MARGIN
    assert commands.run_wait({"timeout": 5.0, "retries": 0, "retry_backoff": 30.0}) == (
        5 + commands.RUN_NOW_MARGIN
    )


def test_without_a_timeout_it_waits_as_long_as_the_run_runs() -> None:
    assert commands.run_wait({"timeout": None, "retries": 3, "retry_backoff": 30.0}) is None


class FakeClient:
    def __init__(self, policies: dict[str, Any]) -> None:
        self.policies = policies
        self.calls: list[tuple[str, float | None]] = []

    def call(self, method: str, params: dict[str, Any], *, timeout: float | None = 30.0) -> Any:
        self.calls.append((method, timeout))
        return {"policies": self.policies} if method == "schedule.get" else RUN


@pytest.mark.parametrize(("timeout", "expected"), [(3600.0, 3600.0 + 60.0), (None, None)])
def test_run_now_asks_the_app_to_wait_that_long(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    timeout: float | None,
    expected: float | None,
) -> None:
    client = FakeClient({"timeout": timeout, "retries": 0, "retry_backoff": 30.0})
    monkeypatch.setattr(commands, "app_client", lambda _args: client)
    assert commands.run_now(argparse.Namespace(id=7, json=True)) == 0
    assert client.calls == [("schedule.get", 30.0), ("schedule.run_now", expected)]
    assert json.loads(capsys.readouterr().out) == RUN


class SlowTransport:
    """An app that stays silent for ``silences`` time-outs, then answers request 1."""

    def __init__(self, silences: int) -> None:
        self.silences = silences
        self.waits: list[float] = []

    def send(self, data: bytes) -> None:
        pass

    def receive(self, timeout: float) -> bytes | None:
        self.waits.append(timeout)
        if self.silences:
            self.silences -= 1
            return None
        return json.dumps({"jsonrpc": "2.0", "id": 1, "result": "done"}).encode() + b"\n"

    def close(self) -> None:
        pass


def test_a_call_without_a_timeout_keeps_reading_past_any_silence() -> None:
    transport = SlowTransport(silences=5)
    client = RpcClient(transport, "the test pipe")
    assert client.call("schedule.run_now", {"id": 1, "wait": True}, timeout=None) == "done"
    assert len(transport.waits) == 6 and all(0 < wait <= CALL_TIMEOUT for wait in transport.waits)


def test_a_call_with_a_timeout_still_gives_up_on_a_silent_app() -> None:
    client = RpcClient(SlowTransport(silences=1), "the test pipe")
    with pytest.raises(SilentApp, match=r"did not answer schedule\.run_now within 5 s"):
        client.call("schedule.run_now", {"id": 1}, timeout=5.0)
