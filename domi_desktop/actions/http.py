"""Run an HTTP request with the standard library; the start of the response goes to the log."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from http.client import HTTPMessage
from typing import IO
from urllib.parse import urlsplit

from domi_desktop import __version__
from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import Outcome, RunControl, Wake, timed_out
from domi_desktop.model import HttpAction, RunStatus

EXCERPT_BYTES = 4096
"""How much of a response body is read and logged; a job's endpoint is not a download."""

# Headers that carry credentials (curl and requests drop them too when a redirect changes host).
_CREDENTIAL_HEADERS = ("Authorization", "Proxy-Authorization", "Cookie")


@dataclass(frozen=True, slots=True)
class _Response:
    status: int
    reason: str
    body: bytes
    truncated: bool
    charset: str | None


def run_http(
    action: HttpAction,
    secrets: Mapping[str, str],
    capture: OutputCapture,
    control: RunControl,
    *,
    timeout: float,
) -> Outcome:
    """Send the request and wait for its response, ``timeout`` seconds or a stop request.

    ``secrets`` maps header → value. The request runs on a helper thread so that a stop is obeyed
    at once; an abandoned request ends by itself at its socket timeout.
    """
    headers = {"User-Agent": f"domi-desktop/{__version__}", **dict(action.headers), **secrets}
    request = urllib.request.Request(
        action.url,
        data=None if action.body is None else action.body.encode(),
        headers=headers,
        method=action.method,
    )
    opener = urllib.request.build_opener(_SameHostCredentials([*secrets, *_CREDENTIAL_HEADERS]))
    capture.write(f"> {action.method} {action.url}\n".encode())
    answer: list[_Response | Exception] = []

    def fetch() -> None:
        try:
            answer.append(_fetch(opener, request, timeout))
        # Whatever went wrong is the run's reason: the worker reports it.
        except Exception as error:
            answer.append(error)
        finally:
            control.notify()

    threading.Thread(target=fetch, daemon=True).start()
    wake = control.wait(lambda: bool(answer), timeout, stoppable=True)
    if wake is Wake.stopped:
        return Outcome(RunStatus.interrupted, control.stop_reason)
    if wake is Wake.deadline or _is_timeout(answer[0]):
        return timed_out(timeout)
    response = answer[0]
    if isinstance(response, Exception):
        return Outcome(RunStatus.failed, f"network error: {_describe(response)}")
    capture.write(f"< HTTP {response.status} {response.reason}\n".encode())
    capture.write(_decode(response.body, response.charset).encode())
    if response.truncated:
        capture.note(f"the response goes on after the first {EXCERPT_BYTES} bytes shown here")
    if 200 <= response.status < 300:
        return Outcome(RunStatus.succeeded)
    return Outcome(RunStatus.failed, f"HTTP {response.status}")


def _fetch(
    opener: urllib.request.OpenerDirector, request: urllib.request.Request, timeout: float
) -> _Response:
    try:
        response = opener.open(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        response = error  # any status but 2xx: still a response, with a body worth logging
    with response:
        body = response.read(EXCERPT_BYTES + 1)
        return _Response(
            status=response.status,
            reason=response.reason,
            body=body[:EXCERPT_BYTES],
            truncated=len(body) > EXCERPT_BYTES,
            charset=response.headers.get_content_charset(),
        )


class _SameHostCredentials(urllib.request.HTTPRedirectHandler):
    """Follows redirects like urllib, but credentials go to the host they were meant for only."""

    def __init__(self, headers: list[str]) -> None:
        self._headers = headers

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            for name in self._headers:
                new.remove_header(name.capitalize())  # urllib keys headers so
        return new


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


def _is_timeout(answer: _Response | Exception) -> bool:
    return isinstance(answer, TimeoutError) or (
        isinstance(answer, urllib.error.URLError) and isinstance(answer.reason, TimeoutError)
    )


def _describe(error: Exception) -> str:
    cause = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    text = str(cause)
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")
