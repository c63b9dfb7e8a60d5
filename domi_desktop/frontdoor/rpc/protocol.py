"""The app's JSON-RPC 2.0 dialect (docs/protocol.md): version, error codes, limits.

Imported by the server (Qt) and by the CLI's client (standard library only), so it imports nothing.

A client opens with ``app.hello`` ``{"protocol": PROTOCOL_VERSION}``; the app answers with its own
version, or ``PROTOCOL_MISMATCH`` naming both. A client that skips the hello (socat, scripts) is
served at the app's version. Messages are one JSON value per line; a last line without a newline
that is complete JSON is answered too when the client half-closes (EOF) after it.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1

HELLO: Final = "app.hello"
EVENTS_CLOSED: Final = "events.closed"
"""The last notification a subscriber gets when the app lets it go (``params.reason``)."""

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
FAILED: Final = -32000
"""A request the app understood but could not carry out (``DomiError``)."""
PROTOCOL_MISMATCH: Final = -32001
NOT_FOUND: Final = -32004

MAX_BATCH: Final = 100
"""A batch with more requests than this is refused whole, with one error."""
MAX_LINE: Final = 1 << 20
"""A request longer than this (1 MiB) without a newline is a flood: the client is dropped."""
POSITIONAL: Final[dict[str, tuple[str, ...]]] = {
    HELLO: ("protocol",),
    "app.status": (),
    "app.show": (),
    "app.quit": (),
    "events.subscribe": (),
    "run.stop": ("id",),
    "schedule.list": (),
    "schedule.get": ("id",),
    "schedule.create": ("name", "expr", "tz", "action", "policies", "enabled", "notes", "at"),
    "schedule.update": ("id", "name", "expr", "tz", "action", "policies", "enabled", "notes", "at"),
    "schedule.skip": ("id", "undo"),
    "schedule.snooze": ("id", "seconds", "undo"),
    "schedule.delete": ("id",),
    "schedule.enable": ("id",),
    "schedule.disable": ("id",),
    "schedule.runs": ("schedule_id", "status", "limit", "before_id"),
    "schedule.timeline": ("schedule_id", "days"),
    "schedule.run_now": ("id", "wait"),
    "schedule.preview": ("expr", "tz", "count", "after", "lang"),
    "schedule.simulate": ("expr", "tz", "last_due", "wakes", "policies"),
    "schedule.export": ("ids",),
    "schedule.import": ("document", "dry_run", "disabled"),
}
"""Each method's parameters in the order a by-position call (``"params": [...]``) gives them;
JSON-RPC 2.0 allows both forms, and a method missing here takes named parameters only."""
