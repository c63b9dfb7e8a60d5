"""Export a schedule to a server's own scheduler: systemd, launchd, crontab, Kubernetes, Windows.

Pure: values in, text out; no files, no processes, no clock. What a target cannot express is
refused with the reason (``ExportError``), or with ``lossy=True`` listed in ``Export.dropped``.
Secrets are referenced (read by the target at run time), never written.
"""

from __future__ import annotations

from datetime import tzinfo

from domi_desktop.cron import CronError, known_zone, parse
from domi_desktop.errors import ExportError
from domi_desktop.export._common import Export, ExportFile, ExportTarget, Losses
from domi_desktop.export._crontab import export_crontab
from domi_desktop.export._healthchecks import healthchecks_schedule
from domi_desktop.export._k8s import export_k8s
from domi_desktop.export._launchd import export_launchd
from domi_desktop.export._opportunity import drop_opportunities
from domi_desktop.export._systemd import export_systemd, on_calendar
from domi_desktop.export._windows import export_windows_task
from domi_desktop.model import LOCAL_ZONE, Schedule

__all__ = [
    "Export",
    "ExportError",
    "ExportFile",
    "ExportTarget",
    "export_schedule",
    "healthchecks_check",
    "on_calendar",
]


def export_schedule(
    schedule: Schedule,
    target: ExportTarget,
    *,
    lossy: bool = False,
    system: bool = False,
    user: str | None = None,
    local_zone: str | tzinfo | None = None,
    image: str = "debian:stable-slim",
    k8s_secret: str = "domi-desktop",
) -> Export:
    """The files that make ``target`` run ``schedule``, and what the target does differently.

    ``system``: a systemd system unit (secrets via ``LoadCredential=``) instead of a user unit
    (secrets from the login keyring); ``user``: the ``User=`` of a system unit. ``local_zone``:
    the zone ``"local"`` stands for on the target machine, when known (it decides whether DST
    days differ). ``image``/``k8s_secret``: the container image and the Secret that holds the
    secret values, for Kubernetes. Raises ``ExportError`` naming what is inexpressible and why.
    """
    try:
        expr = parse(schedule.expr)
    except CronError as error:
        raise ExportError(f"schedule {schedule.id}: {error.message}") from error
    losses = Losses(target, schedule, lossy)
    if schedule.policies.once_at is not None and target in _NO_ONE_OFF:
        raise losses.refuse(_NO_ONE_OFF[target])
    drop_opportunities(losses)
    if target is ExportTarget.systemd:
        files = export_systemd(
            schedule, expr, losses, system=system, user=user, local_zone=local_zone
        )
    elif target is ExportTarget.launchd:
        files = export_launchd(schedule, expr, losses)
    elif target is ExportTarget.crontab:
        files = export_crontab(schedule, expr, losses)
    elif target is ExportTarget.k8s:
        files = export_k8s(schedule, expr, losses, image=image, secret=k8s_secret)
    else:
        files = export_windows_task(schedule, expr, losses)
    return losses.finish(files)


_NO_ONE_OFF = {
    ExportTarget.launchd: "a one-off: launchd has no one-time trigger (StartCalendarInterval"
    " repeats every year) and never records that it ran",
    ExportTarget.crontab: "a one-off: a cron line repeats every year, and cron does not catch up"
    " a run missed while the machine was off (at(1) is cron's one-time tool)",
    ExportTarget.k8s: "a one-off: a CronJob repeats every year (a Kubernetes Job runs once)",
}


def healthchecks_check(expr: str, tz: str, local_zone: str) -> tuple[str, str]:
    """The ``schedule`` and ``tz`` of a Healthchecks cron check expecting a ping whenever domi
    fires ``expr`` in ``tz`` (``local_zone``: the IANA zone ``"local"`` stands for now).
    Raises ``ExportError`` naming what Healthchecks cannot be told."""
    try:
        parsed = parse(expr)
    except CronError as error:
        raise ExportError(error.message) from error
    zone = local_zone if tz == LOCAL_ZONE else tz
    if zone == LOCAL_ZONE or not known_zone(zone):
        raise ExportError(
            f"Healthchecks needs an IANA zone name; this machine's zone is {zone!r}: "
            "give the schedule a zone of its own"
        )
    return healthchecks_schedule(parsed), zone
