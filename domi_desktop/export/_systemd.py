"""systemd: a ``.timer`` with one ``OnCalendar=`` per day pair and the ``.service`` it starts."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import UTC, tzinfo

from domi_desktop.cron import CronExpr, zone_for
from domi_desktop.export._common import (
    SECRET_SERVICE,
    ExportFile,
    Job,
    Losses,
    Moment,
    job_for,
    seconds,
    secret_prelude,
    slug,
)
from domi_desktop.export._dst import describe_wall, meeting
from domi_desktop.export._fields import ALL_HOURS, ALL_MINUTES, ALL_MONTHS, day_rule, runs
from domi_desktop.model import LOCAL_ZONE, CatchUp, Overlap, Schedule

WEEKDAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
CREDSTORE = "/etc/credstore/domi-desktop"
"""Where a system unit loads its secrets from (``LoadCredential=``): one file per secret name."""


def on_calendar(expr: CronExpr, tz: str) -> tuple[str, ...]:
    """The ``OnCalendar=`` values whose union is the expression's fire times in ``tz``."""
    zone = "" if tz == LOCAL_ZONE else f" {tz}"
    month = _component(expr.months, ALL_MONTHS, 2)
    clock = f"{_component(expr.hours, ALL_HOURS, 2)}:{_component(expr.minutes, ALL_MINUTES, 2)}:00"
    lines = []
    for days, weekdays in day_rule(expr).pairs:
        prefix = "" if weekdays is None else ",".join(WEEKDAYS[d] for d in weekdays) + " "
        day = "*" if days is None else _component(days, (), 2)
        lines.append(f"{prefix}*-{month}-{day} {clock}{zone}")
    return tuple(lines)


def _component(values: Sequence[int], full: Sequence[int], width: int) -> str:
    if tuple(values) == tuple(full):
        return "*"
    parts = []
    for first, last in runs(values):
        if last - first >= 2:
            parts.append(f"{first:0{width}d}..{last:0{width}d}")
        else:
            parts.extend(f"{v:0{width}d}" for v in range(first, last + 1))
    return ",".join(parts)


def export_systemd(
    schedule: Schedule,
    expr: CronExpr,
    losses: Losses,
    *,
    system: bool,
    user: str | None,
    local_zone: str | tzinfo | None,
) -> tuple[ExportFile, ...]:
    name = f"domi-{schedule.id}-{slug(schedule.name, 'job')}"
    # A system unit starts at boot, never at a user's login.
    job = job_for(schedule, losses, () if system else (Moment.at_login,))
    _check_policies(schedule, losses, timed=not job.only)
    service = _service(schedule, job, losses, system=system, user=user)
    if job.moments:
        service += (
            "\n[Install]\n# Started with your user's service manager: at your first login (at"
            " boot instead if lingering is on).\nWantedBy=default.target\n"
        )
        if not schedule.enabled:
            service = (
                "# The schedule is disabled in domi-desktop: do not enable it yet.\n" + service
            )
    service_file = ExportFile(f"{name}.service", service)
    if job.only:
        return (service_file,)
    if schedule.policies.once_at is None:  # a one-off is written as its UTC instant
        _check_dst(expr, schedule.tz, local_zone, losses)
    timer = [
        "[Unit]",
        f"Description={_text(schedule.name)} (domi-desktop schedule {schedule.id}, timer)",
        "",
        "[Timer]",
        *(f"OnCalendar={line}" for line in _calendar(schedule, expr)),
        # The default accuracy (1 min) lets systemd move a fire by up to a minute to coalesce.
        "AccuracySec=1s",
        f"Persistent={'true' if schedule.policies.catch_up is CatchUp.latest else 'false'}",
    ]
    if schedule.policies.jitter:
        timer.append(f"RandomizedDelaySec={seconds(schedule.policies.jitter)}")
    timer += [f"Unit={name}.service", "", "[Install]", "WantedBy=timers.target", ""]
    if not schedule.enabled:
        timer.insert(0, "# The schedule is disabled in domi-desktop: do not enable this timer yet.")
    return (ExportFile(f"{name}.timer", "\n".join(timer)), service_file)


def _calendar(schedule: Schedule, expr: CronExpr) -> tuple[str, ...]:
    """A one-off's single instant (in UTC: exact whatever the zone), else the expression's."""
    once = schedule.policies.once_at
    if once is not None:
        return (f"{once.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC",)
    return on_calendar(expr, schedule.tz)


def _service(
    schedule: Schedule, job: Job, losses: Losses, *, system: bool, user: str | None
) -> str:
    lines = [
        "[Unit]",
        f"Description={_text(schedule.name)} (domi-desktop schedule {schedule.id})",
        "",
        "[Service]",
        "Type=oneshot",
    ]
    if schedule.policies.background:  # the whole cgroup: every process the job starts
        lines += ["Nice=19", "IOSchedulingClass=idle", "CPUSchedulingPolicy=idle"]
    if system and user is not None:
        lines.append(f"User={_text(user)}")
    if job.cwd is not None:
        if "\n" in job.cwd:
            raise losses.refuse(f"the working directory {job.cwd!r} holds a line break")
        lines.append(f"WorkingDirectory={_specifiers(job.cwd)}")
    lines += [f"Environment={_quote(f'{k}={v}', dollar=False)}" for k, v in job.env]
    argv = _secrets(job, lines, system)
    lines.append("ExecStart=" + " ".join(_quote(word, dollar=True) for word in argv))
    if job.stdin is not None:
        # Base64 carries the text byte for byte: no specifier or escape rules to get wrong.
        data = base64.b64encode(job.stdin.encode()).decode()
        lines += ["StandardInput=data", f"StandardInputData={data}"]
    timeout = schedule.policies.timeout
    # A oneshot service has no start timeout by default; domi's timeout bounds the whole run.
    lines.append(f"TimeoutStartSec={seconds(timeout) if timeout else 'infinity'}")
    return "\n".join([*lines, ""])


def _secrets(job: Job, lines: list[str], system: bool) -> tuple[str, ...]:
    if not job.secret_env:
        return job.argv
    if system:
        names = sorted({secret for _, secret in job.secret_env})
        lines.append(
            f"# Secrets are loaded at run time from {CREDSTORE}/<name> (one file per secret,"
            " mode 0600, root-owned); this file holds none of their values."
        )
        lines += [f"LoadCredential={name}:{CREDSTORE}/{name}" for name in names]
        return secret_prelude(job, 'cat "$CREDENTIALS_DIRECTORY"/{name}')
    lines.append(
        f"# Secrets are read at run time from the login keyring (service {SECRET_SERVICE},"
        " where domi-desktop keeps them) with secret-tool; this file holds none of their values."
    )
    return secret_prelude(job, f"secret-tool lookup service {SECRET_SERVICE} username {{name}}")


def _check_policies(schedule: Schedule, losses: Losses, *, timed: bool) -> None:
    """What systemd runs otherwise; ``timed``: the schedule runs by its time (catch-up)."""
    policies = schedule.policies
    if policies.overlap is Overlap.queue:
        losses.drop(
            "overlap policy 'queue': a timer that elapses while its service runs starts nothing"
            " and queues nothing (systemd behaves as 'skip')"
        )
    elif policies.overlap is Overlap.parallel:
        losses.drop("overlap policy 'parallel': systemd never runs two copies of one service")
    elif policies.overlap is Overlap.replace:
        losses.drop("overlap policy 'replace': a timer never restarts a running service")
    if policies.concurrency_key is not None:
        losses.drop(
            f"concurrency key {policies.concurrency_key!r}: systemd only keeps one unit from"
            " overlapping itself, not a group of units"
        )
    if timed and policies.catch_up is CatchUp.skip:
        losses.drop(
            "catch-up 'skip': a timer whose elapse passed while the machine slept fires on resume,"
            " Persistent=false only stops it after a power-off"
        )
    if timed and policies.catch_up_within is not None:
        losses.drop(
            "catch-up window: systemd has no 'latest only if at most this late' beyond"
            " Persistent=, which catches up however late"
        )
    if policies.retries:
        losses.drop(
            f"{policies.retries} retries with doubling back-off: systemd 252 has no bounded retry"
            " with a growing delay for a oneshot service"
        )


def _check_dst(expr: CronExpr, tz: str, local_zone: str | tzinfo | None, losses: Losses) -> None:
    if tz == LOCAL_ZONE and local_zone is None:
        losses.drop(
            "DST days in the machine's zone (not known at export time): systemd skips a fixed"
            " time inside a spring-forward gap, domi runs it when the gap ends; systemd runs a"
            " wildcard time in a repeated hour once, domi at each occurrence"
        )
        return
    zone = zone_for(local_zone if tz == LOCAL_ZONE and local_zone is not None else tz)
    met = meeting(expr, zone)
    if met.gap_example is not None:
        losses.drop(
            f"fixed times inside a spring-forward gap (e.g. {describe_wall(met.gap_example)} {tz}):"
            " domi runs them when the gap ends (Debian's rule), systemd skips them"
        )
    if met.fold_example is not None:
        losses.drop(
            f"the second copy of a repeated hour (e.g. {describe_wall(met.fold_example)} {tz}):"
            " domi runs a wildcard job at both occurrences, systemd at the first only"
        )


def _quote(word: str, *, dollar: bool) -> str:
    """A double-quoted unit-file word: C escapes, ``%`` doubled, ``$`` doubled for Exec lines."""
    out = []
    for char in word:
        if char in '\\"':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 32 or ord(char) == 127:
            out.append(f"\\x{ord(char):02x}")
        elif char == "%":
            out.append("%%")
        elif char == "$" and dollar:
            out.append("$$")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _specifiers(text: str) -> str:
    return text.replace("%", "%%")


def _text(text: str) -> str:
    """Free text on one line (Description=): no line breaks, ``%`` escaped."""
    return _specifiers(" ".join(text.split()))
