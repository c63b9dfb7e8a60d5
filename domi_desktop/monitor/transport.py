"""HTTP to the monitors: Healthchecks' ping API and management API v3, and webhooks.

No redirects are followed: an API key in ``X-Api-Key`` must reach the host it was meant for and no
other, and neither Healthchecks' API nor its ping endpoint redirects. Certificates are checked
against the OS trust store, as for the HTTP action.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import io
import json
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from domi_desktop import __version__
from domi_desktop.errors import DomiError
from domi_desktop.monitor.intents import Check, Intent, Kind
from domi_desktop.monitor.status import CheckState, page_url, parse_state
from domi_desktop.paths import ensure_private_dir

log = logging.getLogger(__name__)

TIMEOUT = 10.0
"""Seconds for one whole request (connecting, sending, the answer to its last byte): a slow
monitor, or one that trickles its answer a byte at a time, is retried later."""
CONNECT_TIMEOUT = 3.0
"""Seconds to connect, within ``TIMEOUT``: a connection under way cannot be ended from another
thread, and a quit waits for it."""
BODY_LIMIT = 10_000
"""Healthchecks keeps the first 10 kB of a ping's body; more is sent for nothing."""
CHECKS_FILENAME = "monitor-checks.json"
READ_AT_LEAST = 0.001
"""Seconds a read past the deadline waits: it takes what is there, it waits for nothing more."""


class MonitorError(DomiError):
    """A monitor did not take what was sent."""


class Unreachable(MonitorError):
    """Network trouble, a timeout, a 5xx or a 429: the same request may work later."""


class Refused(MonitorError):
    """The monitor said no for good (a bad key, a check that is gone): retrying cannot help."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Cancel:
    """Ends the requests in progress on one sender's thread: a quit never waits for a monitor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            for sock in self._sockets:
                _shut(sock)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)
            if self.cancelled:
                _shut(sock)

    def done(self) -> None:
        """The request on this thread ended: its sockets are closed or about to be."""
        with self._lock:
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already: nothing left to end
        sock.shutdown(socket.SHUT_RDWR)


def send(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
    cancel: Cancel | None = None,
    on_status: Callable[[int], None] | None = None,
) -> bytes:
    """The response body of a 2xx answer; ``Unreachable`` or ``Refused`` otherwise. The whole
    request ends within ``timeout`` seconds (``TIMEOUT``): each read waits only for what is left
    of it. ``on_status`` is told the 2xx status."""
    # Here, not at the top: urllib.request (with http.client and email) and ssl (with libssl)
    # stay out of an app at rest that has no monitor to send to: 4 MB of its RSS.
    import urllib.error
    import urllib.request

    scheme = urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise Refused("only http:// and https:// monitors are used")
    timeout = TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(
        url,
        data=body,
        headers={"User-Agent": f"domi-desktop/{__version__}", **(headers or {})},
        method=method,
    )
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        _http_handler(deadline, cancel),
        _https_handler(deadline, cancel, _tls_context() if scheme == "https" else None),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    try:
        with opener.open(request, timeout=timeout) as response:
            answer = bytes(response.read(1_000_000))
            if on_status is not None:
                on_status(response.status)
            return answer
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 429 or error.code >= 500:
            raise Unreachable(f"HTTP {error.code}") from None
        raise Refused(f"HTTP {error.code}", error.code) from None
    except (OSError, ValueError) as error:  # URLError is an OSError; ValueError: a bad URL
        raise Unreachable(_describe(error)) from None
    except http.client.HTTPException as error:
        # Bytes that are not HTTP (a captive portal, a broken proxy), or an answer cut short:
        # the monitor may answer properly later.
        raise Unreachable(f"not an HTTP answer ({type(error).__name__})") from None
    finally:
        if cancel is not None:
            cancel.done()


def ping(
    url: str,
    intent: Intent,
    body: bytes,
    cancel: Cancel,
    on_status: Callable[[int], None] | None = None,
) -> None:
    """POST a ping (``intent``'s signal and run id) to a check's ping URL."""
    signal = intent.signal if intent.kind is Kind.ping else ""
    target = url.rstrip("/") + (f"/{signal}" if signal else "")
    if intent.rid is not None:
        target += "?" + urlencode({"rid": intent.rid})
    send("POST", target, body=body, headers={"Content-Type": "text/plain; charset=utf-8"},
         cancel=cancel, on_status=on_status)  # fmt: skip


class _DeadlineReader(io.RawIOBase):
    """A response's bytes, each read given only what is left of the request's time."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        # Past the deadline what has already arrived is still read (a process that was stopped
        # or starved, then resumed late, finds the answer there): sending again would ping twice.
        self._sock.settimeout(max(READ_AT_LEAST, self._deadline - time.monotonic()))
        try:
            return self._raw.readinto(buffer)
        except TimeoutError:
            raise TimeoutError("the monitor took too long to answer") from None

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    deadline = 0.0

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_DeadlineReader(sock, self.deadline))


def _connection_class(
    base: type[http.client.HTTPConnection], deadline: float, cancel: Cancel | None
) -> type[http.client.HTTPConnection]:
    response = type("_Response", (_DeadlineResponse,), {"deadline": deadline})

    class Connection(base):  # type: ignore[valid-type,misc]
        response_class = response

        def connect(self) -> None:
            self.timeout = max(0.001, min(CONNECT_TIMEOUT, deadline - time.monotonic()))
            super().connect()
            if cancel is not None and self.sock is not None:
                cancel.watch(self.sock)

    return Connection


@functools.cache
def _tls_context() -> Any:
    """Made once: reading the OS's trust store took 60 ms, a drain of a spool pays it per ping."""
    from domi_desktop.actions.http import tls_context

    return tls_context()


def _http_handler(deadline: float, cancel: Cancel | None) -> Any:
    import urllib.request

    connection = _connection_class(http.client.HTTPConnection, deadline, cancel)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(connection, req)

    return Handler()


def _https_handler(deadline: float, cancel: Cancel | None, context: Any) -> Any:
    import urllib.request

    connection = _connection_class(http.client.HTTPSConnection, deadline, cancel)

    class Handler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(connection, req, context=context)

    return Handler(context=context)


def _describe(error: Exception) -> str:
    import urllib.error

    cause = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return type(cause).__name__


@dataclass(frozen=True, slots=True)
class Known:
    ping_url: str
    uuid: str
    spec: dict[str, Any]


class CheckBook:
    """The checks domi made, by API and name: their ping URL and uuid, and what they were made
    from (a check is sent again only when the schedule changed). One file per machine."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        """Checks are used by several senders at once (each its own check)."""
        self._known: dict[str, Known] = {}
        self._seen: dict[str, CheckState] = {}
        """Each check's status in Healthchecks' last answer about it, since the start."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            for key, item in data.items():
                self._known[key] = Known(item["ping_url"], item["uuid"], item["spec"])
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            log.warning("cannot read %s (%s): checks are sent again", path, error)

    def known(self) -> dict[str, Known]:
        """``"<api> <name>"`` -> the check as last made."""
        with self._lock:
            return dict(self._known)

    def ensure(self, check: Check, key: str, cancel: Cancel | None = None) -> Known:
        """The check as Healthchecks has it, created or updated when ``check`` changed."""
        spec = _spec(check)
        with self._lock:
            known = self._known.get(_key(check))
        if known is not None and known.spec == spec:
            return known
        api = check.api.rstrip("/")
        headers = {"X-Api-Key": key, "Content-Type": "application/json"}
        answer = _json(send("POST", f"{api}/api/v3/checks/", body=_dumps(spec), headers=headers,
                            cancel=cancel))  # fmt: skip
        ping_url, update_url = answer.get("ping_url"), answer.get("update_url")
        if not isinstance(ping_url, str) or not isinstance(update_url, str):
            raise Refused("Healthchecks answered without the check's ping URL")
        uuid = update_url.rstrip("/").rsplit("/", 1)[-1]
        if not answer.get("channels"):
            # A check without integrations would never tell anyone: it gets the project's (as
            # one made in the web UI does). Integrations the user chose are left as they are.
            send("POST", f"{api}/api/v3/checks/{uuid}", body=_dumps({"channels": "*"}),
                 headers=headers, cancel=cancel)  # fmt: skip
        found = Known(ping_url, uuid, spec)
        with self._lock:
            self._known[_key(check)] = found
            self._seen[_key(check)] = parse_state(answer.get("status"))
            self._write()
        log.info("Healthchecks check %r is set (%s)", check.name, _summary(check))
        return found

    def state(self, check: Check, key: str, cancel: Cancel | None = None) -> CheckState:
        """The check's status as Healthchecks has it now (a request)."""
        with self._lock:
            known = self._known.get(_key(check))
        if known is None:
            return CheckState.unknown
        answer = _json(send("GET", f"{check.api.rstrip('/')}/api/v3/checks/{known.uuid}",
                            headers={"X-Api-Key": key}, cancel=cancel))  # fmt: skip
        state = parse_state(answer.get("status"))
        with self._lock:
            self._seen[_key(check)] = state
        return state

    def learn_state(self, check: Check, key: str, cancel: Cancel | None = None) -> None:
        """Ask Healthchecks the status of a check this app has not heard of since it started
        (made before a restart): what the Monitoring box shows. Not knowing is no failure."""
        if self.seen(check) is CheckState.unknown:
            with contextlib.suppress(MonitorError):
                self.state(check, key, cancel)

    def seen(self, check: Check) -> CheckState:
        """The check's status as Healthchecks last answered it (no request)."""
        with self._lock:
            return self._seen.get(_key(check), CheckState.unknown)

    def page(self, check: Check) -> str | None:
        """The check's page in the Healthchecks web UI, once it was made."""
        with self._lock:
            known = self._known.get(_key(check))
        return None if known is None else page_url(check.api, known.uuid)

    def pause(self, check: Check, key: str, cancel: Cancel | None = None) -> None:
        api = check.api.rstrip("/")
        self.again_if_gone(
            check,
            key,
            lambda known: send("POST", f"{api}/api/v3/checks/{known.uuid}/pause", body=b"",
                               headers={"X-Api-Key": key}, cancel=cancel),
            cancel,
        )  # fmt: skip

    def again_if_gone(
        self,
        check: Check,
        key: str,
        use: Callable[[Known], object],
        cancel: Cancel | None = None,
    ) -> None:
        """``use`` the check; one deleted in Healthchecks meanwhile (404) is made again, and
        used once more."""
        try:
            use(self.ensure(check, key, cancel))
        except Refused as refused:
            if refused.status != 404:
                raise
            log.info("Healthchecks check %r is gone: made again", check.name)
            with self._lock:
                self._known.pop(_key(check), None)
            use(self.ensure(check, key, cancel))

    def _write(self) -> None:
        ensure_private_dir(self.path.parent)
        data = {
            key: {"ping_url": k.ping_url, "uuid": k.uuid, "spec": k.spec}
            for key, k in self._known.items()
        }
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(data, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            log.warning("cannot write %s: %s", self.path, error)


def _spec(check: Check) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": check.name, "grace": check.grace, "unique": ["name"]}
    if check.schedule is not None:
        spec.update(schedule=check.schedule, tz=check.tz)
    else:
        spec["timeout"] = check.timeout
    return spec


def _summary(check: Check) -> str:
    if check.schedule is not None:
        return f"schedule {check.schedule!r} in {check.tz}, grace {check.grace} s"
    return f"period {check.timeout} s, grace {check.grace} s"


def _key(check: Check) -> str:
    return f"{check.api.rstrip('/')} {check.name}"


def _dumps(document: dict[str, Any]) -> bytes:
    return json.dumps(document).encode()


def _json(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        raise Refused("Healthchecks answered with something that is not JSON") from None
    if not isinstance(data, dict):
        raise Refused("Healthchecks answered with something that is not a check")
    return data
