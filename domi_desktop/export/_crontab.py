"""crontab: ``CRON_TZ``, the job's variables, and one line with cron's ``%`` rule escaped.

Debian cron reads the expression with the same rules as domi (domi's dialect is Debian's), so
the time fields carry over unchanged; ``flock`` and ``timeout`` stand in for the overlap and
timeout policies cron lacks.
"""

from __future__ import annotations

import shlex

from domi_desktop.cron import CronExpr
from domi_desktop.export._common import ExportFile, Losses, Moment, job_for, seconds, slug
from domi_desktop.model import LOCAL_ZONE, CatchUp, Overlap, Schedule


def export_crontab(schedule: Schedule, expr: CronExpr, losses: Losses) -> tuple[ExportFile, ...]:
    job = job_for(schedule, losses, (Moment.at_login,))
    if Moment.at_login in job.moments:
        losses.drop(
            "at login: cron runs an @reboot line when cron itself starts, at boot, before anyone"
            " logs in"
        )
    if job.secret_env:
        losses.drop(
            "secrets: cron runs jobs outside the login session, where the keyring cannot be"
            " read; the line runs without the secret variables "
            + ", ".join(variable for variable, _ in job.secret_env)
        )
    policies = schedule.policies
    command = shlex.join(job.argv)
    if policies.timeout is not None:
        command = f"timeout {seconds(policies.timeout)} {command}"
    lock = shlex.quote(
        f"/tmp/domi-{slug(policies.concurrency_key or str(schedule.id), 'job')}.lock"
    )
    if policies.overlap is Overlap.skip:
        command = f"flock -n {lock} {command}"
    elif policies.overlap is Overlap.queue:
        command = f"flock {lock} {command}"
        losses.drop("overlap 'queue' waits with flock, which lets more than one fire wait")
    elif policies.overlap is Overlap.replace:
        losses.drop("overlap 'replace': cron cannot stop a running job; fires run in parallel")
    elif policies.concurrency_key is not None:
        losses.drop("a concurrency key with overlap 'parallel' has nothing to hold apart")
    if policies.background:
        command = f"nice -n 19 {command}"
        losses.drop("the idle disk priority: cron has no portable ionice (the CPU's is nice 19)")
    if job.cwd is not None:
        command = f"cd {shlex.quote(job.cwd)} && {command}"
    if not job.only and policies.catch_up is CatchUp.latest:
        losses.drop("catch-up 'latest': cron never runs a fire missed while the machine was off")
    if policies.retries:
        losses.drop(f"{policies.retries} retries: cron runs a job once per fire")
    if policies.jitter:
        losses.drop("jitter: cron starts jobs on the minute")
    lines = [f"# domi-desktop schedule {schedule.id}: {' '.join(schedule.name.split())}"]
    if not schedule.enabled:
        lines.append("# The schedule is disabled in domi-desktop: the line is commented out.")
    if schedule.tz != LOCAL_ZONE:
        lines.append(f"CRON_TZ={schedule.tz}")
    for name, value in job.env:
        if "\n" in value:
            raise losses.refuse(f"the variable {name} holds a line break, which cron cannot set")
        lines.append(f"{name}={_env_value(value)}")
    if "\n" in command:
        raise losses.refuse("the command holds a line break; a crontab line cannot")
    run = _escape_percent(command)
    if job.stdin is not None:
        # cron feeds what follows the first unescaped % to stdin, each further % as a newline,
        # and ends it with a newline of its own.
        if not job.stdin.endswith("\n"):
            losses.drop("stdin without a final newline: cron always adds one")
        body = job.stdin.removesuffix("\n")
        run += "%" + "%".join(_escape_percent(part) for part in body.split("\n"))
    times = [] if job.only else [expr.macro or " ".join(expr.fields)]
    if Moment.at_login in job.moments:
        times.append("@reboot")
    for time_fields in times:
        line = f"{time_fields} {run}"
        lines.append(line if schedule.enabled else "# " + line)
    name = f"domi-{schedule.id}-{slug(schedule.name, 'job')}.crontab"
    return (ExportFile(name, "\n".join([*lines, ""])),)


def _escape_percent(text: str) -> str:
    return text.replace("%", "\\%")


def _env_value(value: str) -> str:
    """cron strips blanks around a value and one pair of matching quotes: keep the value exact."""
    if value != value.strip() or value[:1] in "'\"" or not value:
        quote = "'" if "'" not in value else '"'
        return f"{quote}{value}{quote}"
    return value
