"""HTTP actions against real HTTP and HTTPS servers on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trustme

from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import RunControl
from domi_desktop.actions.http import run_http
from domi_desktop.model import HttpAction, RunStatus
from domi_desktop.secrets import Masker
from tests.support.wine import wine_cannot

CRYPTOAPI = (
    "truststore verifies through CryptoAPI, whose chain check fails ('Invalid parameter') for a"
    " custom root"
)

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
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/slow", timeout=0.5)))
    assert result.status is RunStatus.timed_out
    assert result.reason == "timed out after 0.5s"
    assert not http_server.answered  # it did not wait for the server's late answer


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
        make_request(HttpAction(url=f"{http_server.url}/slow", timeout=300)), lambda _r: None
    )
    wait_until(lambda: bool(http_server.received))
    running.stop("stopped: replaced by a newer run")
    result = running.wait(60)
    assert result is not None
    assert not http_server.answered  # at once: not when the server answered, nor timed out
    assert result.status is RunStatus.interrupted
    assert result.reason == "stopped: replaced by a newer run"
    assert running.pid is None


def test_only_http_and_https_urls_run(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(HttpAction(url="file:///etc/passwd")))
    assert result.status is RunStatus.failed
    assert result.reason == (
        "invalid action: bad URL 'file:///etc/passwd': only http:// and https:// URLs with a host"
    )


# --- only http and https --------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[tuple[str, threading.Event]]:
    """``(host:port, connected)``: a TCP port that records whether anyone connected to it."""
    connected = threading.Event()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            connected.set()
            conn.sendall(b"220 ftp ready\r\n")  # an FTP greeting, in case a client gets this far
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}", connected
    done.set()
    thread.join(5)
    server.close()


def test_a_redirect_to_ftp_is_refused_without_connecting(
    runner: ActionRunner,
    make_request: MakeRequest,
    http_server: Any,
    listener: tuple[str, threading.Event],
) -> None:
    address, connected = listener
    target = f"ftp://{address}/pub/file.txt"
    result = runner.run(make_request(HttpAction(url=f"{http_server.url}/redirect?{quote(target)}")))
    assert result.status is RunStatus.failed
    assert result.reason == (
        f"redirect (302) to {target!r} refused: only http:// and https:// URLs are followed"
    )
    assert not connected.wait(0.2)


def test_a_redirect_to_a_local_file_is_refused_and_the_file_never_read(
    runner: ActionRunner, make_request: MakeRequest, http_server: Any, tmp_path: Path
) -> None:
    secret_file = tmp_path / "private.txt"
    secret_file.write_text("the contents of a private file\n")
    for target in (secret_file.as_uri(), "FILE:" + secret_file.as_posix()):
        url = f"{http_server.url}/redirect?{quote(target)}"
        result = runner.run(make_request(HttpAction(url=url)))
        assert result.status is RunStatus.failed
        assert result.reason is not None
        assert result.reason.startswith("redirect (302) to "), result.reason
        assert result.reason.endswith("refused: only http:// and https:// URLs are followed")
        assert "private file" not in result.log_path.read_text()


def test_the_first_url_must_be_http_or_https_even_past_the_checks_of_the_action(
    tmp_path: Path,
) -> None:
    target = tmp_path / "private.txt"
    target.write_text("the contents of a private file\n")
    capture = OutputCapture(tmp_path / "run.log", Masker([]))
    for url in (target.as_uri(), "ftp://127.0.0.1:9/x", "data:,hello"):
        outcome = run_http(HttpAction(url=url), {}, capture, RunControl(), timeout=5)
        assert outcome.status is RunStatus.failed
        assert outcome.reason == f"URL {url!r} refused: only http:// and https:// URLs are followed"
    capture.close()
    assert capture.tail() == ""
    assert not (tmp_path / "run.log").exists()  # nothing was written to it, the file least of all


# --- HTTPS: the OS trust store ----------------------------------------------------------------


class _HttpsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"hello over TLS\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``(url, ca.pem)``: an HTTPS server on 127.0.0.1 whose certificate a fresh CA signed."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HttpsHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    ca_file = tmp_path / "test-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    yield f"https://127.0.0.1:{server.server_address[1]}", ca_file
    server.shutdown()
    server.server_close()
    thread.join(5)


@wine_cannot(CRYPTOAPI)
def test_https_succeeds_when_the_servers_ca_is_trusted(
    runner: ActionRunner,
    make_request: MakeRequest,
    https_server: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, ca_file = https_server
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    result = runner.run(make_request(HttpAction(url=f"{url}/ok")))
    assert result.status is RunStatus.succeeded, result.reason
    assert result.output_tail == f"> GET {url}/ok\n< HTTP 200 OK\nhello over TLS\n"


@wine_cannot(CRYPTOAPI)
def test_https_to_a_server_of_an_untrusted_ca_is_refused(
    runner: ActionRunner,
    make_request: MakeRequest,
    https_server: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    url, _ = https_server
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    monkeypatch.setenv("SSL_CERT_FILE", str(other))  # a CA is trusted, just not the server's
    result = runner.run(make_request(HttpAction(url=f"{url}/ok")))
    assert result.status is RunStatus.failed
    assert result.reason is not None
    assert "certificate verify failed" in result.reason


@pytest.mark.linux_only  # macOS and Windows ask the OS store, which has no such paths
def test_the_systems_ca_bundle_is_found_where_the_bundled_openssl_does_not_look(
    runner: ActionRunner,
    make_request: MakeRequest,
    https_server: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The frozen app's OpenSSL looks in the build machine's directory, which is not there.

    Simulated with an OpenSSL default that points nowhere; the trusted CA sits where the
    distribution keeps its bundle, and must be found there.
    """
    import truststore._openssl

    url, ca_file = https_server
    empty = tmp_path / "empty-certs"
    empty.mkdir()
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "not-there" / "cert.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(empty))
    monkeypatch.setattr(truststore._openssl, "_CA_FILE_CANDIDATES", [str(ca_file)])
    result = runner.run(make_request(HttpAction(url=f"{url}/ok")))
    assert result.status is RunStatus.succeeded, result.reason
