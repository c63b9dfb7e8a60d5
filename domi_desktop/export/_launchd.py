"""launchd: a property list with ``StartCalendarInterval`` dictionaries (launchd.plist(5)).

launchd has no zones: a calendar interval is read in the Mac's own zone. A dictionary's missing
keys are wildcards and an array is the union of its dictionaries, so each dictionary here holds
at most one of ``Day`` and ``Weekday`` and the day rule becomes one or two sets of them.
"""

from __future__ import annotations

import itertools
import plistlib
import shlex
from typing import Any

from domi_desktop.cron import CronExpr
from domi_desktop.export._common import (
    SECRET_SERVICE,
    ExportFile,
    Losses,
    Moment,
    job_for,
    secret_prelude,
)
from domi_desktop.export._fields import ALL_HOURS, ALL_MINUTES, ALL_MONTHS, day_rule
from domi_desktop.model import LOCAL_ZONE, CatchUp, Overlap, Schedule

MAX_INTERVALS = 5000
"""More calendar dictionaries than this make a plist no one can review: refused instead."""


def calendar_intervals(expr: CronExpr, losses: Losses) -> list[dict[str, int]]:
    axes: list[tuple[str, tuple[int, ...] | None]] = [
        ("Month", None if expr.months == ALL_MONTHS else expr.months),
        ("Hour", None if expr.hours == ALL_HOURS else expr.hours),
        ("Minute", None if expr.minutes == ALL_MINUTES else expr.minutes),
    ]
    intervals: list[dict[str, int]] = []
    for days, weekdays in day_rule(expr).pairs:
        if days is not None and weekdays is not None:
            raise losses.refuse(
                f"{expr.text!r} needs a day of month AND a weekday (its day-of-month field"
                " starts with '*'); launchd reads Day with Weekday as cron's either-or"
            )
        keyed = [*axes, ("Day", days), ("Weekday", weekdays)]
        present = [(key, values) for key, values in keyed if values is not None]
        count = 1
        for _, values in present:
            count *= len(values)
        if len(intervals) + count > MAX_INTERVALS:
            raise losses.refuse(
                f"{expr.text!r} needs more than {MAX_INTERVALS} StartCalendarInterval entries"
            )
        for combination in itertools.product(*(values for _, values in present)):
            intervals.append(
                {key: value for (key, _), value in zip(present, combination, strict=True)}
            )
    return intervals


def export_launchd(schedule: Schedule, expr: CronExpr, losses: Losses) -> tuple[ExportFile, ...]:
    label = f"org.domi-desktop.schedule.{schedule.id}"
    # A LaunchAgent is loaded when its user logs in: RunAtLoad starts the job then.
    job = job_for(schedule, losses, (Moment.at_login,))
    if not job.only and schedule.tz != LOCAL_ZONE:
        losses.drop(
            f"the zone {schedule.tz}: launchd has no zones and fires at these wall times in"
            " the Mac's own zone"
        )
    intervals = [] if job.only else calendar_intervals(expr, losses)
    argv = secret_prelude(job, f"security find-generic-password -s {SECRET_SERVICE} -a {{name}} -w")
    if job.stdin is not None:
        # launchd can only take stdin from a file: the shell feeds the text instead.
        argv = (
            "/bin/sh",
            "-c",
            f'printf %s {shlex.quote(job.stdin)} | exec "$0" "$@"',
            *argv,
        )
    plist: dict[str, Any] = {"Label": label, "ProgramArguments": list(argv)}
    if Moment.at_login in job.moments:
        plist["RunAtLoad"] = True
    if intervals:
        plist["StartCalendarInterval"] = intervals[0] if len(intervals) == 1 else intervals
    if job.cwd is not None:
        plist["WorkingDirectory"] = job.cwd
    if job.env:
        plist["EnvironmentVariables"] = dict(job.env)
    if not schedule.enabled:
        plist["Disabled"] = True
    if schedule.policies.background:
        plist["ProcessType"] = "Background"
        plist["LowPriorityIO"] = True
    _check_policies(schedule, losses, timed=not job.only)
    text = plistlib.dumps(plist, sort_keys=False).decode()
    return (ExportFile(f"{label}.plist", text),)


def _check_policies(schedule: Schedule, losses: Losses, *, timed: bool) -> None:
    """What launchd runs otherwise; ``timed``: the schedule runs by its time (catch-up)."""
    policies = schedule.policies
    if policies.overlap is not Overlap.skip:
        losses.drop(
            f"overlap '{policies.overlap.value}': launchd never starts a job that is still"
            " running (it behaves as 'skip')"
        )
    if policies.concurrency_key is not None:
        losses.drop("a concurrency key: launchd keeps only a job from overlapping itself")
    if timed and policies.catch_up is CatchUp.skip:
        losses.drop("catch-up 'skip': launchd runs a fire missed during sleep once on wake")
    if timed and policies.catch_up_within is not None:
        losses.drop("a catch-up window: launchd catches up on wake however late")
    if policies.timeout is not None:
        losses.drop("a timeout: launchd has no limit on how long a job runs")
    if policies.retries:
        losses.drop(f"{policies.retries} retries: launchd does not retry a calendar job")
    if policies.jitter:
        losses.drop("jitter: launchd starts calendar jobs on the minute")
