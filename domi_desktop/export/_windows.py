"""Windows Task Scheduler: a task XML (schema ``http://schemas.microsoft.com/windows/2004/02/mit/task``).

A calendar trigger fires at one time of day on the days its schedule element names, optionally
repeated at a fixed interval: the expression's times of day are cut into as few arithmetic runs
as possible, one trigger per run and day rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, timedelta
from xml.sax.saxutils import escape

from domi_desktop.cron import CronExpr
from domi_desktop.export._common import ExportFile, Job, Losses, Moment, job_for, seconds, slug
from domi_desktop.export._fields import ALL_MONTHS, day_rule
from domi_desktop.export._opportunity import idle_settings
from domi_desktop.model import LOCAL_ZONE, CatchUp, CommandAction, Overlap, Schedule

MAX_TRIGGERS = 48
"""Task Scheduler's limit on the triggers of one task."""
NAMESPACE = "http://schemas.microsoft.com/windows/2004/02/mit/task"
_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
)
_WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_POLICY = {
    Overlap.skip: "IgnoreNew",
    Overlap.queue: "Queue",
    Overlap.parallel: "Parallel",
    Overlap.replace: "StopExisting",
}

Run = tuple[int, int, int]
"""(first minute of the day, interval in minutes, count)."""


def time_runs(expr: CronExpr) -> list[Run]:
    """The fewest arithmetic runs of minutes-of-day among three cuts: all at once, one per
    minute value (across hours), one per hour (across minutes)."""
    every = sorted(h * 60 + m for h in expr.hours for m in expr.minutes)
    whole = _arithmetic(every)
    if whole is not None:
        return [whole]
    by_minute = [_arithmetic([h * 60 + m for h in expr.hours]) for m in expr.minutes]
    by_hour = [_arithmetic([h * 60 + m for m in expr.minutes]) for h in expr.hours]
    options = [cut for cut in (by_minute, by_hour) if all(run is not None for run in cut)]
    if options:
        best = min(options, key=len)
        return [run for run in best if run is not None]
    return [(t, 0, 1) for t in every]


def _arithmetic(values: Sequence[int]) -> Run | None:
    if len(values) == 1:
        return (values[0], 0, 1)
    step = values[1] - values[0]
    if all(b - a == step for a, b in itertools.pairwise(values)):
        return (values[0], step, len(values))
    return None


def export_windows_task(
    schedule: Schedule, expr: CronExpr, losses: Losses
) -> tuple[ExportFile, ...]:
    job = job_for(schedule, losses, (Moment.at_login,))
    once = schedule.policies.once_at
    if once is not None:
        stamp = f"{once.astimezone(UTC):%Y-%m-%dT%H:%M:%S}Z"
        triggers = [f"<TimeTrigger><Enabled>true</Enabled><StartBoundary>{stamp}</StartBoundary>"]
        triggers[0] += "</TimeTrigger>"
    else:
        triggers = [] if job.only else _calendar_triggers(schedule, expr, losses)
    if Moment.at_login in job.moments:
        # Without a UserId: at the logon of whoever the task runs as (the user who imports it).
        triggers.append("<LogonTrigger><Enabled>true</Enabled></LogonTrigger>")
    policies = schedule.policies
    command, arguments, cwd = _exec(schedule, job, losses)
    exec_parts = [f"<Command>{escape(command)}</Command>"]
    if arguments:
        exec_parts.append(f"<Arguments>{escape(arguments)}</Arguments>")
    if cwd is not None:
        exec_parts.append(f"<WorkingDirectory>{escape(cwd)}</WorkingDirectory>")
    settings = [
        f"<MultipleInstancesPolicy>{_POLICY[policies.overlap]}</MultipleInstancesPolicy>",
        "<DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>",
        "<StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>",
        f"<StartWhenAvailable>{str(policies.catch_up is CatchUp.latest).lower()}"
        "</StartWhenAvailable>",
        f"<Enabled>{str(schedule.enabled).lower()}</Enabled>",
        # PT0S is "no limit"; without the element Task Scheduler stops a task after 72 hours.
        f"<ExecutionTimeLimit>{_duration(policies.timeout or timedelta(0))}</ExecutionTimeLimit>",
        *idle_settings(losses),
    ]
    if policies.background:  # 10: IDLE_PRIORITY_CLASS, the lowest (the default is 7)
        settings.append("<Priority>10</Priority>")
    if policies.retries:
        every = max(policies.retry_backoff, timedelta(minutes=1))
        settings.append(
            f"<RestartOnFailure><Interval>{_duration(every)}</Interval>"
            f"<Count>{policies.retries}</Count></RestartOnFailure>"
        )
        losses.drop("the retry back-off: Task Scheduler retries at a fixed interval (>= 1 min)")
    if policies.overlap is Overlap.queue:
        losses.drop("overlap 'queue': Task Scheduler's Queue lets more than one fire wait")
    if policies.concurrency_key is not None:
        losses.drop("a concurrency key: MultipleInstancesPolicy only holds one task apart")
    if not job.only and policies.catch_up_within is not None:
        losses.drop("a catch-up window: StartWhenAvailable catches up however late")
    description = f"domi-desktop schedule {schedule.id}: {schedule.name}"
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Task version="1.3" xmlns="{NAMESPACE}">'
        f"<RegistrationInfo><Description>{escape(description)}</Description>"
        f"<URI>\\domi-desktop\\{escape(slug(schedule.name, 'job'))}-{schedule.id}</URI>"
        "</RegistrationInfo>"
        f"<Triggers>{''.join(triggers)}</Triggers>"
        f"<Settings>{''.join(settings)}</Settings>"
        f"<Actions><Exec>{''.join(exec_parts)}</Exec></Actions>"
        "</Task>\n"
    )
    return (ExportFile(f"domi-{schedule.id}-{slug(schedule.name, 'job')}.xml", xml),)


def _calendar_triggers(schedule: Schedule, expr: CronExpr, losses: Losses) -> list[str]:
    """The calendar triggers that start the task at the expression's times."""
    suffix = _zone_suffix(schedule.tz, losses)
    policies = schedule.policies
    runs_ = time_runs(expr)
    day_elements = [_days(expr, days, weekdays, losses) for days, weekdays in day_rule(expr).pairs]
    if len(runs_) * len(day_elements) > MAX_TRIGGERS:
        raise losses.refuse(
            f"{expr.text!r} needs {len(runs_) * len(day_elements)} calendar triggers;"
            f" a task holds at most {MAX_TRIGGERS}"
        )
    delay = f"<RandomDelay>{_duration(policies.jitter)}</RandomDelay>" if policies.jitter else ""
    triggers = []
    for start, interval, count in runs_:
        repetition = ""
        if count > 1:
            # Half a minute past the last start: the last one is inside, the next is not.
            span = timedelta(minutes=interval * (count - 1), seconds=30)
            repetition = (
                f"<Repetition><Interval>PT{interval}M</Interval>"
                f"<Duration>{_duration(span)}</Duration>"
                "<StopAtDurationEnd>false</StopAtDurationEnd></Repetition>"
            )
        boundary = f"2000-01-01T{start // 60:02d}:{start % 60:02d}:00{suffix}"
        for element in day_elements:
            triggers.append(
                f"<CalendarTrigger><Enabled>true</Enabled><StartBoundary>{boundary}"
                f"</StartBoundary>{repetition}{delay}{element}</CalendarTrigger>"
            )
    return triggers


def _days(
    expr: CronExpr,
    days: tuple[int, ...] | None,
    weekdays: tuple[int, ...] | None,
    losses: Losses,
) -> str:
    months = "" if expr.months == ALL_MONTHS else _names("Months", _MONTHS, expr.months, 1)
    all_months = _names("Months", _MONTHS, ALL_MONTHS, 1)
    if days is not None and weekdays is not None:
        raise losses.refuse(
            f"{expr.text!r} needs a day of month AND a weekday; a calendar trigger names one"
            " or the other"
        )
    if weekdays is not None:
        week_days = _names("DaysOfWeek", _WEEKDAYS, weekdays, 0)
        if not months:
            return f"<ScheduleByWeek><WeeksInterval>1</WeeksInterval>{week_days}</ScheduleByWeek>"
        weeks = "".join(f"<Week>{w}</Week>" for w in ("1", "2", "3", "4", "Last"))
        return (
            f"<ScheduleByMonthDayOfWeek><Weeks>{weeks}</Weeks>{week_days}{months}"
            "</ScheduleByMonthDayOfWeek>"
        )
    if days is None and not months:
        return "<ScheduleByDay><DaysInterval>1</DaysInterval></ScheduleByDay>"
    listed = "".join(f"<Day>{d}</Day>" for d in (days or range(1, 32)))
    return (
        f"<ScheduleByMonth><DaysOfMonth>{listed}</DaysOfMonth>{months or all_months}"
        "</ScheduleByMonth>"
    )


def _names(tag: str, names: Sequence[str], values: Sequence[int], base: int) -> str:
    return f"<{tag}>" + "".join(f"<{names[v - base]} />" for v in values) + f"</{tag}>"


def _zone_suffix(tz: str, losses: Losses) -> str:
    if tz == LOCAL_ZONE:
        return ""
    if tz in ("UTC", "Etc/UTC"):
        return "Z"
    losses.drop(
        f"the zone {tz}: Task Scheduler has no named zones; the times are written without an"
        " offset and fire in the machine's zone"
    )
    return ""


def _exec(schedule: Schedule, job: Job, losses: Losses) -> tuple[str, str, str | None]:
    action = schedule.action
    if isinstance(action, CommandAction) and action.shell is not None:
        # domi runs a shell line on Windows through cmd.exe the same way.
        command, arguments = "cmd.exe", f'/d /s /c "{action.shell}"'
    else:
        command, arguments = job.argv[0], " ".join(_windows_word(w) for w in job.argv[1:])
    if job.env:
        losses.drop("environment variables: a task's Exec action cannot set any")
    if job.secret_env:
        raise losses.refuse(
            "secrets: a Task Scheduler action cannot read a secret at run time, and the export"
            " never writes one"
        )
    if job.stdin is not None:
        losses.drop("stdin text: a task's Exec action cannot feed standard input")
    return command, arguments, job.cwd


def _windows_word(word: str) -> str:
    """One argument quoted the way the C runtime's command-line parser splits it back."""
    if word and not any(c in word for c in ' \t\n"'):
        return word
    out, backslashes = ['"'], 0
    for char in word:
        if char == "\\":
            backslashes += 1
            continue
        if char == '"':
            out.append("\\" * (2 * backslashes + 1) + '"')
        else:
            out.append("\\" * backslashes + char)
        backslashes = 0
    out.append("\\" * (2 * backslashes) + '"')
    return "".join(out)


def _duration(delta: timedelta) -> str:
    total = seconds(delta)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    text += f"{secs}S" if secs or total == 0 else ""
    return text
