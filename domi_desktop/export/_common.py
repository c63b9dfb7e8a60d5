"""Values shared by the exporters: the result, the losses ledger, and the job a target runs."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from domi_desktop.errors import ExportError
from domi_desktop.model import CommandAction, HttpAction, Pairs, Schedule

SECRET_SERVICE = "domi-desktop"
"""The keyring service domi stores secrets under (domi_desktop.secrets.store.SERVICE)."""


class ExportTarget(Enum):
    systemd = "systemd"
    launchd = "launchd"
    crontab = "crontab"
    k8s = "k8s"
    windows_task = "windows-task"


@dataclass(frozen=True, slots=True)
class ExportFile:
    name: str
    """A file name (no directory) the text is meant to be saved as."""
    text: str


@dataclass(frozen=True, slots=True)
class Export:
    files: tuple[ExportFile, ...]
    dropped: tuple[str, ...]
    """What the target does differently from domi (only non-empty with ``lossy=True``)."""


class Losses:
    """The ledger of what a target cannot express: raised at the end unless the export is lossy."""

    def __init__(self, target: ExportTarget, schedule: Schedule, lossy: bool) -> None:
        self.target = target
        self.schedule = schedule
        self.lossy = lossy
        self.items: list[str] = []

    def drop(self, what: str) -> None:
        if what not in self.items:
            self.items.append(what)

    def drop_the_world(self) -> None:
        """What no server scheduler has: waiting for a disk, a network or a path, and running
        at the moments of a desktop session (login, unlock, resume, before sleep)."""
        c, session = self.schedule.policies.conditions, self.schedule.policies.session
        for what, value in (
            ("disk", c.volume),
            ("network", c.network_name),
            ("path", c.path_exists),
        ):
            if value is not None:
                self.drop(f"the wait for the {what} {value}")
        moments = [name for name in _MOMENTS if getattr(session, name)]
        if moments:
            only = " (it runs at no time of its own: the export would run it by its expression)"
            self.drop(f"the session triggers {', '.join(moments)}" + (only if session.only else ""))

    def refuse(self, what: str) -> ExportError:
        """An error for something no approximation can stand in for, even with ``--lossy``."""
        return ExportError(f"{self._subject()}: {what}")

    def finish(self, files: tuple[ExportFile, ...]) -> Export:
        if self.items and not self.lossy:
            listed = "\n".join(f"  - {item}" for item in self.items)
            raise ExportError(
                f"{self._subject()} cannot express:\n{listed}\n"
                "use --lossy to export anyway; the export then lists what was dropped"
            )
        return Export(files=files, dropped=tuple(self.items))

    def _subject(self) -> str:
        return f"schedule {self.schedule.id} ({self.schedule.name!r}) for {self.target.value}"


@dataclass(frozen=True, slots=True)
class Job:
    """What a target starts: an argv, plus the action's cwd, environment, secrets and stdin."""

    argv: tuple[str, ...]
    cwd: str | None
    env: Pairs
    secret_env: Pairs
    """(variable, secret name): the target fetches the value at run time, never the export."""
    stdin: str | None


_MOMENTS = ("at_login", "at_unlock", "on_resume", "before_sleep")


def job_for(schedule: Schedule, losses: Losses) -> Job:
    """The command the target runs: argv as is, a shell line through /bin/sh -c, HTTP via curl."""
    losses.drop_the_world()
    action = schedule.action
    if isinstance(action, CommandAction):
        if action.shell is not None:
            argv: tuple[str, ...] = ("/bin/sh", "-c", action.shell)
        elif action.argv:
            argv = action.argv
        else:
            raise losses.refuse("the command action has neither argv nor a shell line")
        return Job(argv, action.cwd, action.env, action.secret_env, action.stdin)
    return _curl_job(action, schedule.policies.timeout)


def _curl_job(action: HttpAction, timeout: timedelta | None) -> Job:
    """curl is on every server these targets run on (and in Windows 10+); it fails on non-2xx
    with --fail, as domi's HTTP action does."""
    limit = action.timeout if timeout is None else min(action.timeout, timeout.total_seconds())
    words = ["curl", "--silent", "--show-error", "--fail", "--max-time", _number(limit)]
    words += ["--request", action.method.upper()]
    for header, value in action.headers:
        words += ["--header", f"{header}: {value}"]
    if action.body is not None:
        words += ["--data-binary", action.body]
    words += ["--", action.url]
    if not action.secret_headers:
        return Job(tuple(words), None, (), (), None)
    # A secret header's value is only known at run time: the shell puts it in from a variable.
    secret_env: list[tuple[str, str]] = []
    line = shlex.join(words[:-2])
    for index, (header, secret) in enumerate(action.secret_headers, start=1):
        variable = f"DOMI_SECRET_{index}"
        secret_env.append((variable, secret))
        line += f' --header "{_dq(header)}: ${variable}"'
    line += " -- " + shlex.quote(action.url)
    return Job(("/bin/sh", "-c", line), None, (), tuple(secret_env), None)


def _dq(text: str) -> str:
    """Text safe inside a POSIX shell double-quoted string."""
    return re.sub(r'([\\"$`])', r"\\\1", text)


def _number(seconds: float) -> str:
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:g}"


def secret_prelude(job: Job, fetch: str) -> tuple[str, ...]:
    """Wrap ``job.argv`` in /bin/sh so each secret variable is read at run time by ``fetch``
    (a shell command with ``{name}`` for the secret name) and the job is then exec'd."""
    if not job.secret_env:
        return job.argv
    parts = []
    for variable, secret in job.secret_env:
        command = fetch.format(name=shlex.quote(secret))
        # set -e does not see a failing command substitution in an assignment: check it.
        parts.append(f'{variable}="$({command})" || exit 1; export {variable}')
    script = "; ".join(parts) + '; exec "$0" "$@"'
    return ("/bin/sh", "-c", script, *job.argv)


def seconds(delta: timedelta) -> int:
    """Whole seconds, rounded up so a limit never becomes shorter."""
    whole = int(delta.total_seconds())
    return whole + (1 if delta.total_seconds() > whole else 0)


def slug(text: str, fallback: str) -> str:
    """A file-name-safe, lower-case form of a schedule name."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")
    return cleaned or fallback
