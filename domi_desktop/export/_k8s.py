"""Kubernetes: a ``batch/v1`` CronJob manifest (JSON, which is YAML too).

The CronJob controller's parser (robfig/cron) treats only a bare ``*`` day field as "any", so
``*/2`` in day-of-month turns Vixie's AND into an OR there: the schedule is written from the
parsed sets, with lists, and a bare ``*`` only for a full field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from domi_desktop.cron import CronExpr, zone_for
from domi_desktop.export._common import ExportFile, Losses, job_for, seconds, slug
from domi_desktop.export._dst import describe_wall, meeting
from domi_desktop.export._fields import ALL_HOURS, ALL_MINUTES, ALL_MONTHS, day_rule, runs
from domi_desktop.model import LOCAL_ZONE, CatchUp, Overlap, Schedule

GRACE_SECONDS = 60
"""domi runs a due found within 60 s as on time; later ones are catch-ups (the scheduler's grace)."""
_POLICY = {Overlap.skip: "Forbid", Overlap.parallel: "Allow", Overlap.replace: "Replace"}


def schedule_field(expr: CronExpr, losses: Losses) -> str:
    pairs = day_rule(expr).pairs
    if len(pairs) == 2:
        days, weekdays = pairs[0][0], pairs[1][1]
    else:
        days, weekdays = pairs[0]
        if days is not None and weekdays is not None:
            raise losses.refuse(
                f"{expr.text!r} needs a day of month AND a weekday; Kubernetes' cron ORs two"
                " restricted day fields and has no way to AND them"
            )
    return " ".join(
        (
            _field(expr.minutes, ALL_MINUTES),
            _field(expr.hours, ALL_HOURS),
            "*" if days is None else _field(days, ()),
            _field(expr.months, ALL_MONTHS),
            "*" if weekdays is None else _field(weekdays, ()),
        )
    )


def _field(values: Sequence[int], full: Sequence[int]) -> str:
    if tuple(values) == tuple(full):
        return "*"
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs(values))


def export_k8s(
    schedule: Schedule, expr: CronExpr, losses: Losses, *, image: str, secret: str
) -> tuple[ExportFile, ...]:
    job = job_for(schedule, losses)
    policies = schedule.policies
    name = f"domi-{schedule.id}-{slug(schedule.name, 'job')}"[:52].rstrip("-")
    spec: dict[str, Any] = {"schedule": schedule_field(expr, losses)}
    if policies.background:
        losses.drop("background priority: a pod's CPU and disk priority are the cluster's")
    if schedule.tz == LOCAL_ZONE:
        losses.drop("the zone 'local': the CronJob runs in the controller manager's zone")
    else:
        spec["timeZone"] = schedule.tz
        met = meeting(expr, zone_for(schedule.tz))
        if met.gap_example is not None or met.fold_example is not None:
            example = met.gap_example or met.fold_example
            assert example is not None
            losses.drop(
                f"DST days (e.g. {describe_wall(example)} {schedule.tz}): Kubernetes' cron"
                " library does not follow Debian's rule for gaps and repeated hours"
            )
    if policies.overlap is Overlap.queue:
        losses.drop("overlap 'queue': Kubernetes has no queue policy; written as Forbid (skip)")
    spec["concurrencyPolicy"] = _POLICY.get(policies.overlap, "Forbid")
    if policies.concurrency_key is not None:
        losses.drop("a concurrency key: concurrencyPolicy only holds one CronJob apart")
    if policies.catch_up is CatchUp.skip:
        # A start later than domi's grace is a catch-up, which 'skip' does not run.
        spec["startingDeadlineSeconds"] = GRACE_SECONDS
    elif policies.catch_up_within is not None:
        spec["startingDeadlineSeconds"] = max(seconds(policies.catch_up_within), GRACE_SECONDS)
    if not schedule.enabled:
        spec["suspend"] = True
    container: dict[str, Any] = {"name": "job", "image": image, "command": list(job.argv)}
    if job.cwd is not None:
        container["workingDir"] = job.cwd
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in job.env]
    env += [
        {"name": variable, "valueFrom": {"secretKeyRef": {"name": secret, "key": secret_name}}}
        for variable, secret_name in job.secret_env
    ]
    if env:
        container["env"] = env
    if job.stdin is not None:
        container["stdin"] = True
        container["stdinOnce"] = True
        losses.drop("stdin text: a CronJob's container cannot be given text on stdin")
    job_spec: dict[str, Any] = {
        "backoffLimit": policies.retries,
        "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
    }
    if policies.retries and policies.retry_backoff.total_seconds() != 10:
        losses.drop(
            "the retry back-off: Kubernetes doubles from 10 s, not from"
            f" {seconds(policies.retry_backoff)} s"
        )
    if policies.timeout is not None:
        job_spec["activeDeadlineSeconds"] = seconds(policies.timeout)
    if policies.jitter:
        losses.drop("jitter: a CronJob starts on the minute")
    spec["jobTemplate"] = {"spec": job_spec}
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/managed-by": "domi-desktop"},
            "annotations": {"domi-desktop/schedule": f"{schedule.id} {schedule.name}"},
        },
        "spec": spec,
    }
    return (ExportFile(f"{name}.cronjob.json", json.dumps(manifest, indent=2) + "\n"),)
