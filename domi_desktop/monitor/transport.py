"""HTTP to the monitors: Healthchecks' ping API and management API v3, and webhooks.

No redirects are followed: an API key in ``X-Api-Key`` must reach the host it was meant for and no
other, and neither Healthchecks' API nor its ping endpoint redirects. Certificates are checked
against the OS trust store, as for the HTTP action.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from domi_desktop import __version__
from domi_desktop.errors import DomiError
from domi_desktop.monitor.intents import Check
from domi_desktop.paths import ensure_private_dir

log = logging.getLogger(__name__)

TIMEOUT = 10.0
"""Seconds for one request: a slow monitor is retried later, it never holds a result back long."""
BODY_LIMIT = 10_000
"""Healthchecks keeps the first 10 kB of a ping's body; more is sent for nothing."""
CHECKS_FILENAME = "monitor-checks.json"


class MonitorError(DomiError):
    """A monitor did not take what was sent."""


class Unreachable(MonitorError):
    """Network trouble, a timeout, a 5xx or a 429: the same request may work later."""


class Refused(MonitorError):
    """The monitor said no for good (a bad key, a check that is gone): retrying cannot help."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def send(
    method: str, url: str, *, body: bytes | None = None, headers: dict[str, str] | None = None
) -> bytes:
    """The response body of a 2xx answer; ``Unreachable`` or ``Refused`` otherwise."""
    # Here, not at the top: urllib.request (with http.client and email) and ssl (with libssl)
    # stay out of an app at rest that has no monitor to send to: 4 MB of its RSS.
    import urllib.error
    import urllib.request

    from domi_desktop.actions.http import tls_context

    if urlsplit(url).scheme not in ("http", "https"):
        raise Refused("only http:// and https:// monitors are used")
    request = urllib.request.Request(
        url,
        data=body,
        headers={"User-Agent": f"domi-desktop/{__version__}", **(headers or {})},
        method=method,
    )
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(context=tls_context()),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return bytes(response.read(1_000_000))
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 429 or error.code >= 500:
            raise Unreachable(f"HTTP {error.code}") from None
        raise Refused(f"HTTP {error.code}", error.code) from None
    except (OSError, ValueError) as error:  # URLError is an OSError; ValueError: a bad URL
        raise Unreachable(_describe(error)) from None


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
        self._known: dict[str, Known] = {}
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
        return dict(self._known)

    def ensure(self, check: Check, key: str) -> Known:
        """The check as Healthchecks has it, created or updated when ``check`` changed."""
        spec = _spec(check)
        known = self._known.get(_key(check))
        if known is not None and known.spec == spec:
            return known
        api = check.api.rstrip("/")
        headers = {"X-Api-Key": key, "Content-Type": "application/json"}
        answer = _json(send("POST", f"{api}/api/v3/checks/", body=_dumps(spec), headers=headers))
        ping_url, update_url = answer.get("ping_url"), answer.get("update_url")
        if not isinstance(ping_url, str) or not isinstance(update_url, str):
            raise Refused("Healthchecks answered without the check's ping URL")
        uuid = update_url.rstrip("/").rsplit("/", 1)[-1]
        if not answer.get("channels"):
            # A check without integrations would never tell anyone: it gets the project's (as
            # one made in the web UI does). Integrations the user chose are left as they are.
            send("POST", f"{api}/api/v3/checks/{uuid}", body=_dumps({"channels": "*"}),
                 headers=headers)  # fmt: skip
        found = Known(ping_url, uuid, spec)
        self._known[_key(check)] = found
        self._write()
        log.info("Healthchecks check %r is set (%s)", check.name, _summary(check))
        return found

    def pause(self, check: Check, key: str) -> None:
        api = check.api.rstrip("/")
        self.again_if_gone(
            check,
            key,
            lambda known: send("POST", f"{api}/api/v3/checks/{known.uuid}/pause", body=b"",
                               headers={"X-Api-Key": key}),
        )  # fmt: skip

    def again_if_gone(self, check: Check, key: str, use: Callable[[Known], object]) -> None:
        """``use`` the check; one deleted in Healthchecks meanwhile (404) is made again, and
        used once more."""
        try:
            use(self.ensure(check, key))
        except Refused as refused:
            if refused.status != 404:
                raise
            log.info("Healthchecks check %r is gone: made again", check.name)
            self._known.pop(_key(check), None)
            use(self.ensure(check, key))

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
