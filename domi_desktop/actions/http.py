"""Run an HTTP request with the standard library; the start of the response goes to the log.

Only ``http`` and ``https``, on the first URL and on every redirect: urllib alone would follow a
redirect to ``ftp://`` and open ``file://`` and ``data:`` URLs. Certificates are verified with the
operating system's own trust store (``truststore``): see ``tls_context``.
"""

from __future__ import annotations

import os
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from http.client import HTTPMessage
from typing import IO
from urllib.parse import urljoin, urlsplit

from domi_desktop import __version__
from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import Outcome, RunControl, Wake, timed_out
from domi_desktop.errors import ActionError
from domi_desktop.model import HttpAction, RunStatus

EXCERPT_BYTES = 4096
"""How much of a response body is read and logged; a job's endpoint is not a download."""

# Headers that carry credentials (curl and requests drop them too when a redirect changes host).
_CREDENTIAL_HEADERS = ("Authorization", "Proxy-Authorization", "Cookie")

SCHEMES = ("http", "https")
"""The only URL schemes a request or a redirect may use."""


class RefusedURL(ActionError):
    """A URL (the action's or a redirect's) whose scheme is not http or https."""


def check_scheme(url: str, what: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in SCHEMES:
        raise RefusedURL(f"{what} {url!r} refused: only http:// and https:// URLs are followed")


def tls_context() -> ssl.SSLContext:
    """Certificates are checked against the OS trust store, as a browser on that OS checks them.

    ``truststore`` asks the Keychain on macOS and CryptoAPI on Windows (so roots that an admin or
    MDM installed count, and revocations apply), and OpenSSL on Linux with the distribution's CA
    bundle, which it finds itself when the OpenSSL inside the bundle looks in the build machine's
    directory. ``SSL_CERT_FILE`` (OpenSSL's variable) names extra CAs to trust on every OS.
    """
    import truststore  # ~10 ms to import; only HTTPS runs need it

    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    extra = os.environ.get("SSL_CERT_FILE")
    if extra and os.path.isfile(extra):
        context.load_verify_locations(cafile=extra)
    return context


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
    try:
        check_scheme(action.url, "URL")
    except RefusedURL as error:
        return Outcome(RunStatus.failed, str(error))
    headers = {"User-Agent": f"domi-desktop/{__version__}", **dict(action.headers), **secrets}
    request = urllib.request.Request(
        action.url,
        data=None if action.body is None else action.body.encode(),
        headers=headers,
        method=action.method,
    )
    opener = _opener(_SameHostCredentials([*secrets, *_CREDENTIAL_HEADERS]))
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
    if isinstance(response, RefusedURL):
        return Outcome(RunStatus.failed, str(response))
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


def _opener(redirects: urllib.request.HTTPRedirectHandler) -> urllib.request.OpenerDirector:
    """urllib's default opener without its ftp, file and data handlers, HTTPS on ``tls_context``."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),  # honours http_proxy, https_proxy and no_proxy
        urllib.request.UnknownHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(context=tls_context()),
        urllib.request.HTTPDefaultErrorHandler(),
        redirects,
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


class _SameHostCredentials(urllib.request.HTTPRedirectHandler):
    """Follows http and https redirects only; credentials go to the host they were meant for."""

    def __init__(self, headers: list[str]) -> None:
        self._headers = headers

    def http_error_302(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
    ) -> IO[bytes] | None:
        # Checked before urllib's own check, which lets ftp:// through and turns other schemes
        # into an HTTPError that would read as a mere "HTTP 302".
        target = headers.get("location") or headers.get("uri")
        if target:
            try:
                check_scheme(urljoin(req.full_url, target.strip()), f"redirect ({code}) to")
            except RefusedURL:
                fp.close()  # urllib closes it only on the paths it takes itself
                raise
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

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
