"""HTTP actions against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.model import HttpAction, RunStatus

MakeRequest = Callable[..., ActionRequest]


def test_a_2xx_succeeds_and_the_response_is_logged(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    url = f"{http_server.url}/ok"
    result = runner.run(make_request(HttpAction(url=url)))
    assert result.status is RunStatus.succeeded
    assert result.reason is None
    assert result.exit_code is None
    expected = f"> GET {url}\n< HTTP 200 OK\nhello from the server\n"
    assert result.output_tail == expected
    assert result.log_path.read_text() == expected


def test_another_status_fails_with_it_and_the_body_is_logged(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/unavailable")))
    assert result.status is RunStatus.failed
    assert result.reason == "HTTP 503"
    assert result.output_tail.endswith(
        "< HTTP 503 Service Unavailable\ntry again later\n[domi-desktop] HTTP 503\n"
    )


def test_method_headers_and_body_are_sent(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    action = HttpAction(
        url=f"{http_server.url}/echo",
        method="POST",
        headers=(("Content-Type", "application/json"), ("X-Report", "rate-limit")),
        body='{"endpoint": "/login"}',
    )
    result = runner.run(make_request(action))
    assert result.status is RunStatus.succeeded
    [received] = http_server.received
    assert received.method == "POST"
    assert received.body == b'{"endpoint": "/login"}'
    assert received.headers["Content-Type"] == "application/json"
    assert received.headers["X-Report"] == "rate-limit"
    assert received.headers["User-Agent"].startswith("domi-desktop/")


def test_a_secret_header_arrives_but_is_masked_in_the_log(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    action = HttpAction(url=f"{http_server.url}/echo", secret_headers=(("X-Api-Key", "key"),))
    result = runner.run(make_request(action, secrets={"X-Api-Key": "key-7f3a9c"}))
    assert result.status is RunStatus.succeeded
    assert http_server.received[0].headers["X-Api-Key"] == "key-7f3a9c"
    echoed = json.loads(result.output_tail.split("\n", 2)[2])
    assert echoed["headers"]["X-Api-Key"] == "***"
    assert b"key-7f3a9c" not in result.log_path.read_bytes()


def test_a_secret_header_is_not_sent_to_another_host_on_a_redirect(
    runner: ActionRunner, make_request: MakeRequest, http_server_factory: Callable[[], Any]
) -> None:
    origin, elsewhere = http_server_factory(), http_server_factory()
    action = HttpAction(
        url=f"{origin.url}/redirect?{quote(elsewhere.url + '/ok')}",
        headers=(("Authorization", "Basic dXNlcjpwYXNz"),),
        secret_headers=(("X-Api-Key", "key"),),
    )
    result = runner.run(make_request(action, secrets={"X-Api-Key": "key-7f3a9c"}))
    assert result.status is RunStatus.succeeded
    assert origin.received[0].headers["X-Api-Key"] == "key-7f3a9c"
    [redirected] = elsewhere.received
    assert "X-Api-Key" not in redirected.headers
    assert "Authorization" not in redirected.headers


def test_a_same_host_redirect_keeps_the_secret_header(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    action = HttpAction(
        url=f"{http_server.url}/redirect?{quote(http_server.url + '/ok')}",
        secret_headers=(("X-Api-Key", "key"),),
    )
    result = runner.run(make_request(action, secrets={"X-Api-Key": "key-7f3a9c"}))
    assert result.status is RunStatus.succeeded
    assert [r.headers["X-Api-Key"] for r in http_server.received] == ["key-7f3a9c"] * 2


def test_only_the_start_of_a_long_response_is_read(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/big")))
    log = result.log_path.read_text()
    body = log.split("\n", 2)[2]
    assert body.startswith("00000\n00001\n")
    assert body.endswith(
        "[domi-desktop] the response goes on after the first 4096 bytes shown here\n"
    )
    assert len(body.split("[domi-desktop]")[0]) == 4096 + 1  # the excerpt, then a line break


def test_the_declared_charset_is_used_to_decode(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/latin1")))
    assert result.output_tail.endswith("\ncafé")


def test_a_refused_connection_is_a_failed_run(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    with socket.socket() as probe:  # a port that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.run(make_request(HttpAction(url=f"http://127.0.0.1:{port}/")))
    assert result.status is RunStatus.failed
    assert result.reason == "network error: Connection refused"


def test_a_slow_server_times_out(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    began = time.monotonic()
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/slow", timeout=0.5)))
    assert result.status is RunStatus.timed_out
    assert result.reason == "timed out after 0.5s"
    assert time.monotonic() - began < 3


def test_the_run_timeout_applies_when_shorter_than_the_actions(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any
) -> None:
    action = HttpAction(url=f"{http_server.url}/slow", timeout=30)
    result = runner.run(make_request(action, timeout=0.3))
    assert result.status is RunStatus.timed_out
    assert result.reason == "timed out after 0.3s"


def test_stop_interrupts_a_request_at_once(
    runner: ActionRunner,
    make_request: MakeRequest,
    http_server: Any,
    wait_until: Callable[[Callable[[], bool]], None],
) -> None:
    running = runner.start(
        make_request(HttpAction(url=f"{http_server.url}/slow", timeout=5)), lambda _r: None
    )
    wait_until(lambda: bool(http_server.received))
    began = time.monotonic()
    running.stop("stopped: replaced by a newer run")
    result = running.wait(5)
    assert result is not None
    assert time.monotonic() - began < 1
    assert result.status is RunStatus.interrupted
    assert result.reason == "stopped: replaced by a newer run"
    assert running.pid is None


def test_only_http_and_https_urls_run(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(HttpAction(url="file:///etc/passwd")))
    assert result.status is RunStatus.failed
    assert result.reason == (
        "invalid action: bad URL 'file:///etc/passwd': only http:// and https:// URLs with a host"
    )
