"""A local Healthchecks: the documented ping API and management API v3, on loopback only.

    with FakeHealthchecks(api_key="...", now=clock) as hc:
        hc.url   # http://127.0.0.1:PORT  (API at /api/v3/, pings at /ping/<uuid>)

Checks keep Healthchecks' state: status new/up/down/paused (grace and started are read from
it), last_ping, the starts in progress by rid, grace, and a cron schedule + tz (evaluated with
cronsim, the library Healthchecks itself uses) or a simple timeout. The "down" decision follows
Healthchecks' rules (hc/api/models.py: ``get_grace_start``, ``going_down_after``, ``ping``):

- an ``up`` cron check is expected at the first schedule time after its last ping (in its tz), a
  simple one ``timeout`` after it; it goes down once that plus ``grace`` has passed;
- a start (``/start``) not followed by its end within ``grace`` makes any check but a down one
  go down at ``start + grace``;
- a success (or exit code 0) makes it up, a failure (``/fail``, a non-zero exit code) down;
  ``/log`` changes nothing; new and paused checks never go down on time alone; a ping to a
  paused check resumes it (``manual_resume`` false, the default);
- Healthchecks' ``sendalerts`` flips a check when its time comes; here each request (and
  ``settle``) first applies the flips whose time has come, dated when they were due, so a clock
  that jumps hours ahead finds the same flips as a clock that walked.

Every flip is kept with its time (``flips``), as Healthchecks lists them at
``/api/v3/checks/<uuid>/flips/``: each flip to down is one alert.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

NEVER = datetime(3000, 1, 1, tzinfo=UTC)


@dataclass
class Flip:
    at: datetime
    old: str
    new: str


@dataclass
class Ping:
    at: datetime
    kind: str
    """start, success, fail, log"""
    rid: str | None
    body: str
    exitstatus: int | None


@dataclass
class FakeCheck:
    code: str
    name: str
    grace: timedelta = timedelta(hours=1)
    schedule: str | None = None
    tz: str = "UTC"
    timeout: timedelta = timedelta(days=1)
    channels: str = ""
    status: str = "new"
    last_ping: datetime | None = None
    starts: dict[str | None, datetime] = field(default_factory=dict)
    flips: list[Flip] = field(default_factory=list)
    pings: list[Ping] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "cron" if self.schedule is not None else "simple"

    def grace_start(self) -> datetime:
        result = NEVER
        if self.status == "up" and self.last_ping is not None:
            if self.schedule is not None:
                local = self.last_ping.astimezone(ZoneInfo(self.tz))
                result = next(CronSim(self.schedule, local)).astimezone(UTC)
            else:
                result = self.last_ping + self.timeout
        if self.starts and self.status != "down":
            result = min(result, *self.starts.values())
        return result

    def going_down_after(self) -> datetime:
        start = self.grace_start()
        return start if start == NEVER else start + self.grace

    def settle(self, now: datetime) -> None:
        """The flip to down Healthchecks' alerter would have made by ``now``."""
        due = self.going_down_after()
        if self.status != "down" and due <= now:
            self._flip(due, "down")

    def _flip(self, at: datetime, new: str) -> None:
        self.flips.append(Flip(at, self.status, new))
        self.status = new

    def ping(self, now: datetime, kind: str, rid: str | None, body: str, code: int | None) -> None:
        self.settle(now)
        self.pings.append(Ping(now, kind, rid, body, code))
        if kind == "start":
            self.starts[rid] = now
            return
        if kind == "log":
            return
        self.last_ping = now
        # The end of a run ends its own start (by rid), or every start without a rid.
        self.starts.pop(rid, None)
        new = "down" if kind == "fail" else "up"
        if self.status != new:
            self._flip(now, new)

    def status_now(self, now: datetime) -> str:
        if self.status in ("new", "paused", "down"):
            return "started" if self.starts and self.status != "down" else self.status
        if now >= self.grace_start():
            return "grace"
        return "up"

    def to_json(self, base: str, now: datetime) -> dict[str, Any]:
        found: dict[str, Any] = {
            "name": self.name,
            "grace": int(self.grace.total_seconds()),
            "status": self.status_now(now),
            "last_ping": None if self.last_ping is None else self.last_ping.isoformat(),
            "n_pings": len(self.pings),
            "ping_url": f"{base}/ping/{self.code}",
            "update_url": f"{base}/api/v3/checks/{self.code}",
            "pause_url": f"{base}/api/v3/checks/{self.code}/pause",
            "resume_url": f"{base}/api/v3/checks/{self.code}/resume",
            "channels": self.channels,
            "manual_resume": False,
        }
        if self.schedule is not None:
            found.update(schedule=self.schedule, tz=self.tz)
        else:
            found["timeout"] = int(self.timeout.total_seconds())
        return found


class FakeHealthchecks:
    def __init__(
        self, api_key: str, now: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.api_key = api_key
        self.now = now
        self.checks: dict[str, FakeCheck] = {}
        self.lock = threading.RLock()
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        """Every request as received: method, path with query, headers, body."""
        self.unreachable = False
        """While True every request gets 503 (a monitor that is down or far away)."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeHealthchecks:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # -- what tests read -----------------------------------------------------------------------

    def by_name(self, name: str) -> FakeCheck:
        with self.lock:
            return next(c for c in self.checks.values() if c.name == name)

    def settle(self) -> None:
        with self.lock:
            now = self.now()
            for check in self.checks.values():
                check.settle(now)

    def downs(self) -> list[tuple[str, Flip]]:
        self.settle()
        with self.lock:
            return [
                (c.name, flip) for c in self.checks.values() for flip in c.flips
                if flip.new == "down"
            ]  # fmt: skip

    def add_check(self, name: str, **values: Any) -> FakeCheck:
        with self.lock:
            check = FakeCheck(str(uuid.uuid4()), name, **values)
            self.checks[check.code] = check
            return check

    # -- the API -------------------------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, Any]:
        with self.lock:
            self.requests.append((method, target, headers, body))
            if self.unreachable:
                return 503, "unavailable"
            now = self.now()
            for check in self.checks.values():
                check.settle(now)
            parts = urlsplit(target)
            path = [p for p in parts.path.split("/") if p]
            if path[:1] == ["ping"]:
                return self._ping(method, path[1:], parse_qs(parts.query), body, now)
            if path[:2] == ["api", "v3"]:
                if headers.get("x-api-key") != self.api_key:
                    return 401, {"error": "missing, invalid or read-only API key"}
                return self._api(method, path[2:], body, now)
            return 404, "not found"

    def _ping(
        self, method: str, path: list[str], query: dict[str, list[str]], body: bytes, now: datetime
    ) -> tuple[int, Any]:
        if method not in ("GET", "POST", "HEAD") or not path or path[0] not in self.checks:
            return 404, "not found"
        check = self.checks[path[0]]
        rid = query.get("rid", [None])[0]
        if rid is not None:
            try:
                uuid.UUID(rid)
            except ValueError:
                return 400, "invalid rid"
        signal = path[1] if len(path) > 1 else ""
        code: int | None = None
        if signal in ("", "start", "fail", "log"):
            kind = {"": "success"}.get(signal, signal)
        elif signal.isdigit() and int(signal) <= 255:
            code = int(signal)
            kind = "success" if code == 0 else "fail"
        else:
            return 400, "invalid url format"
        check.ping(now, kind, rid, body[:10_000].decode(errors="replace"), code)
        return 200, "OK"

    def _api(self, method: str, path: list[str], body: bytes, now: datetime) -> tuple[int, Any]:
        try:
            document = json.loads(body) if body else {}
        except ValueError:
            return 400, {"error": "could not parse request body"}
        if path == ["checks"] and method == "GET":
            return 200, {"checks": [c.to_json(self.url, now) for c in self.checks.values()]}
        if path == ["checks"] and method == "POST":
            return self._create(document, now)
        if len(path) >= 2 and path[0] == "checks" and path[1] in self.checks:
            check = self.checks[path[1]]
            action = path[2] if len(path) > 2 else ""
            if action == "" and method == "GET":
                return 200, check.to_json(self.url, now)
            if action == "" and method == "POST":
                error = _update(check, document)
                return (400, {"error": error}) if error else (200, check.to_json(self.url, now))
            if action == "pause" and method == "POST":
                # Healthchecks: pausing clears the start in progress and any alert time.
                check.starts.clear()
                if check.status != "paused":
                    check._flip(now, "paused")
                return 200, check.to_json(self.url, now)
            if action == "resume" and method == "POST":
                if check.status != "paused":
                    return 409, {"error": "check is not paused"}
                check._flip(now, "new")
                check.last_ping = None
                return 200, check.to_json(self.url, now)
            if action == "flips" and method == "GET":
                return 200, [
                    {"timestamp": f.at.isoformat(), "up": int(f.new == "up")}
                    for f in check.flips if f.new in ("up", "down")
                ]  # fmt: skip
        return 404, {"error": "not found"}

    def _create(self, document: dict[str, Any], now: datetime) -> tuple[int, Any]:
        unique = document.get("unique", [])
        if not isinstance(unique, list) or not set(unique) <= {
            "name",
            "slug",
            "tags",
            "timeout",
            "grace",
        }:
            return 400, {"error": "unique has an unsupported field"}
        for check in self.checks.values():
            if unique and all(getattr(check, key, None) == document.get(key) for key in unique):
                error = _update(check, document)
                return (400, {"error": error}) if error else (200, check.to_json(self.url, now))
        check = FakeCheck(str(uuid.uuid4()), str(document.get("name", "")))
        error = _update(check, document)
        if error:
            return 400, {"error": error}
        self.checks[check.code] = check
        return 201, check.to_json(self.url, now)


def _update(check: FakeCheck, document: dict[str, Any]) -> str | None:
    """Healthchecks' validation of the fields it is sent (a check is changed only when all pass)."""
    changes: dict[str, Any] = {}
    grace = document.get("grace")
    if grace is not None:
        if not isinstance(grace, int) or not 60 <= grace <= 31_536_000:
            return "grace is not a number between 60 and 31536000"
        changes["grace"] = timedelta(seconds=grace)
    if "schedule" in document:
        schedule, tz = document["schedule"], document.get("tz", check.tz)
        if not isinstance(schedule, str) or len(schedule) > 100:
            return "schedule is not a string of at most 100 characters"
        try:
            ZoneInfo(tz)
            next(CronSim(schedule, datetime.now(ZoneInfo(tz))))
        except (CronSimError, StopIteration, KeyError, ValueError):
            return "schedule is not a valid cron expression or tz is not a valid timezone"
        changes.update(schedule=schedule, tz=tz)
    elif "timeout" in document:
        timeout = document["timeout"]
        if not isinstance(timeout, int) or not 60 <= timeout <= 31_536_000:
            return "timeout is not a number between 60 and 31536000"
        changes.update(timeout=timedelta(seconds=timeout), schedule=None)
    if "name" in document:
        changes["name"] = str(document["name"])
    if "channels" in document:
        changes["channels"] = "*" if document["channels"] == "*" else str(document["channels"])
    for key, value in changes.items():
        setattr(check, key, value)
    return None


def _handler(hc: FakeHealthchecks) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {key.lower(): value for key, value in self.headers.items()}
            # Under the lock until the answer is on its way: a test that sees a ping knows its
            # sender has the answer (a test that moves the app's clock then cannot make that
            # request time out).
            with hc.lock:
                status, answer = hc.handle(self.command, self.path, headers, body)
                data = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
                self.send_response(status)
                kind = "text/plain" if isinstance(answer, str) else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                self.wfile.flush()

        do_GET = do_POST = do_HEAD = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
