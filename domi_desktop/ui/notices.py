"""The wake's notice: "Rate-limit report ran late" / "due 09:00, ran 10:02 · 2 earlier runs
skipped", one for all the catch-ups of a wake, times on the local clock with the schedule's beside."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from domi_desktop.cron import local_zone, zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import FireEvent, LateFire, WakeReason
from domi_desktop.platform.notify import Notice
from domi_desktop.ui.i18n import register, tr, weekdays, zone_name

register(
    "zh",
    {
        "{name} ran late": "{name} 迟到运行",
        "due {due}, ran {ran}": "应于 {due}，实际 {ran}",
        "{count} earlier runs skipped": "跳过了 {count} 次更早的运行",
        "1 earlier run skipped": "跳过了 1 次更早的运行",
        "{count} schedules caught up after sleep": "睡眠后补运行了 {count} 个计划",
        "{count} schedules caught up after the app was closed": "应用关闭期间错过的 {count} 个计划已补运行",
        "{count} schedules caught up": "已补运行 {count} 个计划",
    },
)


def _zone_or_local(tz: str) -> tzinfo:
    try:
        return zone_for(tz)
    except DomiError:
        return zone_for("local")


def clock_time(moment: datetime, tz: str, *, day: bool = False) -> str:
    """``14:00`` on the local clock, ``14:00 (09:00 New York)`` when the schedule's differs;
    with ``day`` the weekday before it: ``Mon 14:00``."""
    here = moment.astimezone(local_zone())
    there = moment.astimezone(_zone_or_local(tz))
    shown = f"{weekdays()[here.weekday()]} {here:%H:%M}" if day else f"{here:%H:%M}"
    if there.utcoffset() == here.utcoffset():
        return shown
    return f"{shown} ({there:%H:%M} {zone_name(tz)})"


def _today(moment: datetime, now: datetime) -> bool:
    zone = local_zone()
    return moment.astimezone(zone).date() == now.astimezone(zone).date()


def late_notice(
    fires: Sequence[FireEvent | LateFire], now: datetime, reason: WakeReason = WakeReason.resume
) -> Notice:
    """ "Rate-limit report ran late" / "due 09:00, ran 10:02 · 2 earlier runs skipped"; times
    not of today (``now``) carry their day: "due Mon 12:00, ran Tue 10:19"."""

    def line(fire: FireEvent | LateFire) -> str:
        assert fire.due is not None  # only scheduled fires are late
        day = not (_today(fire.due, now) and _today(fire.fired_at, now))
        text = tr(
            "due {due}, ran {ran}",
            due=clock_time(fire.due, fire.tz, day=day),
            ran=clock_time(fire.fired_at, fire.tz, day=day),
        )
        if fire.missed_count == 1:
            text += " · " + tr("1 earlier run skipped")
        elif fire.missed_count > 1:
            text += " · " + tr("{count} earlier runs skipped", count=fire.missed_count)
        return text

    if len(fires) == 1:
        # Said before its claim was on disk (``LateFire``), a click opens the history as a whole.
        run_id = fires[0].run_id if isinstance(fires[0], FireEvent) else None
        return Notice(tr("{name} ran late", name=fires[0].name), line(fires[0]), run_id=run_id)
    if reason is WakeReason.resume:
        title = tr("{count} schedules caught up after sleep", count=len(fires))
    elif reason is WakeReason.start:
        title = tr("{count} schedules caught up after the app was closed", count=len(fires))
    else:
        title = tr("{count} schedules caught up", count=len(fires))
    return Notice(title, "\n".join(f"{fire.name}: {line(fire)}" for fire in fires))
