"""What a run is asked to do and what came of it; action checks and secret resolution."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

from domi_desktop.errors import ActionError, SecretError
from domi_desktop.model import Action, CommandAction, HttpAction, RunStatus
from domi_desktop.ports import SecretStore
from domi_desktop.secrets import validate_name

TAIL_BYTES = 4096
"""How much of the end of a run's output is kept in the database (the whole of it is in the log)."""


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One run of an action.

    ``secrets`` holds values already read; it stays empty when the runner is to read them from a
    store itself (``ActionRunner.start(..., secrets=store)``, what the app and the CLI do).
    """

    action: Action
    run_id: int
    log_path: Path
    timeout: timedelta | None = None
    secrets: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Environment variable (command) or header (HTTP) → secret value. See ``resolve_secrets``."""
    start_by: datetime | None = None
    """Past this (the runner's clock), the action is not started: the run ends ``interrupted``
    with reason ``NOT_STARTED_LATE``. A run of a shared store may have been taken over by another
    machine once its lease lapsed, and a process frozen between the hand-off and the start must
    not start a second copy then."""
    background: bool = False
    """The lowest CPU and disk priority for the job's whole tree (``priority``)."""

    def __repr__(self) -> str:
        # The values must not reach a log through a repr; the names are enough to debug.
        return (
            f"ActionRequest(action={self.action!r}, run_id={self.run_id}, log_path="
            f"{str(self.log_path)!r}, timeout={self.timeout!r}, secrets={sorted(self.secrets)}, "
            f"start_by={self.start_by!r})"
        )


@dataclass(frozen=True, slots=True)
class ActionResult:
    status: RunStatus
    """``succeeded``, ``failed``, ``timed_out`` or ``interrupted``."""
    reason: str | None
    """``None`` on success, else for a person: ``exit code 3``, ``HTTP 503``, ``timed out after
    5s``, ``secret unavailable: ...``, ``could not start: ...``, or the reason given to ``stop``."""
    exit_code: int | None
    """The process's exit status (negative: killed by that signal); ``None`` for HTTP or when the
    process never started."""
    output_tail: str
    """The last ``TAIL_BYTES`` of the log, secrets masked, decoded leniently."""
    log_path: Path
    started_at: datetime
    finished_at: datetime
    too_late: bool = False
    """The runner did not start the action: it was handed over past its ``start_by``."""


def resolve_secrets(action: Action, store: SecretStore) -> dict[str, str]:
    """Read the action's secrets: environment variable or header → value.

    Raises ``SecretError`` when one cannot be read; a caller that resolves secrets itself records
    the run as failed with reason ``secret unavailable: <message>``. ``ActionRunner.start(...,
    secrets=store)`` does exactly that, on a thread of the run's own, and is what the app and
    CLI use.
    """
    refs = action.secret_env if isinstance(action, CommandAction) else action.secret_headers
    return {target: store.get(name) for target, name in refs}


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP token (RFC 9110 §5.6.2): what a method or a header name may be made of."""


def check_action(action: Action) -> None:
    """Raise ``ActionError`` naming what is wrong with an action that cannot run."""
    if isinstance(action, CommandAction):
        _check_command(action)
    else:
        _check_http(action)


def _check_command(action: CommandAction) -> None:
    if bool(action.argv) == (action.shell is not None):
        raise ActionError("a command needs either an argument list or a shell line, not both")
    if action.argv and not action.argv[0]:
        raise ActionError("the command's program name is empty")
    if action.shell is not None and not action.shell.strip():
        raise ActionError("the shell line is empty")
    if any("\0" in arg for arg in (*action.argv, action.shell or "", action.stdin or "")):
        raise ActionError("the command contains a NUL character")
    if action.cwd == "":
        raise ActionError("the working directory is empty (leave it unset to use the home folder)")
    for name, value in action.env:
        _check_env_name(name)
        if "\0" in value:
            raise ActionError(f"the value of environment variable {name} contains a NUL character")
    for name, secret in action.secret_env:
        _check_env_name(name)
        _check_secret_name(secret)


def _check_http(action: HttpAction) -> None:
    try:
        parts = urlsplit(action.url)
    except ValueError as error:  # an unclosed [ of an IPv6 host, a netloc that NFKC changes
        raise ActionError(f"bad URL {action.url!r}: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ActionError(f"bad URL {action.url!r}: only http:// and https:// URLs with a host")
    if not _TOKEN.fullmatch(action.method):
        raise ActionError(f"bad HTTP method {action.method!r}")
    for name, value in action.headers:
        _check_header_name(name)
        if any(c in value for c in "\r\n\0"):
            # A line break would let the value smuggle in headers of its own.
            raise ActionError(f"the value of HTTP header {name} contains a line break or NUL")
    for name, secret in action.secret_headers:
        _check_header_name(name)
        _check_secret_name(secret)
    if not action.timeout > 0:
        raise ActionError(f"bad HTTP timeout {action.timeout!r}: a number of seconds above 0")


def _check_env_name(name: str) -> None:
    if not name or "=" in name or "\0" in name:
        raise ActionError(f"bad environment variable name {name!r}: non-empty, no '=' and no NUL")


def _check_header_name(name: str) -> None:
    if not _TOKEN.fullmatch(name):
        raise ActionError(f"bad HTTP header name {name!r}: letters, digits and !#$%&'*+.^_`|~-")


def _check_secret_name(name: str) -> None:
    try:
        validate_name(name)
    except SecretError as error:
        raise ActionError(str(error)) from None
