"""The wake's notice: "Rate-limit report ran late" / "due 09:00, ran 10:02 · 2 earlier runs
skipped", one for all the catch-ups of a wake, times on the local clock with the schedule's beside."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, tzinfo

from domi_desktop.cron import local_zone, zone_for
from domi_desktop.errors import DomiError
from domi_desktop.events import FireEvent, LateFire
from domi_desktop.model import WakeReason
from domi_desktop.platform.notify import Notice
from domi_desktop.scheduler.alerts import AlertNotice, NoticeKind
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


register(
    "zh",
    {
        "{name} failed": "{name} 运行失败",
        "no reason given": "没有给出原因",
        "{name} is still failing": "{name} 仍在失败",
        "{count} failures in a row: {error}": "连续失败 {count} 次：{error}",
        "{name} works again": "{name} 恢复正常",
        "{name} works again after 1 failure.": "{name} 在失败 1 次后恢复正常。",
        "{name} works again after {count} failures.": "{name} 在失败 {count} 次后恢复正常。",
        "{name} is paused": "{name} 已暂停",
        "Paused after {count} failures in a row ({error}). Turn it back on in the main window, "
        "or run: domi-desktop schedule enable {id}": (
            "连续失败 {count} 次后已暂停（{error}）。可在主窗口中重新启用，"
            "或运行：domi-desktop schedule enable {id}"
        ),
        "{name} has not succeeded for {span}": "{name} 已 {span}没有成功运行",
        "No successful run for {span}.": "已 {span}没有成功运行。",
        "1 missed run is catching up.": "1 个错过的运行正在补跑。",
        "{count} missed runs are catching up.": "{count} 个错过的运行正在补跑。",
        "{count} missed runs are catching up, {limit} at a time.": (
            "{count} 个错过的运行正在补跑，每次最多 {limit} 个。"
        ),
        "1 day": "1 天",
        "{count} days": "{count} 天",
        "1 hour": "1 小时",
        "{count} hours": "{count} 小时",
        "1 minute": "1 分钟",
        "{count} minutes": "{count} 分钟",
        "1 second": "1 秒",
        "{count} seconds": "{count} 秒",
    },
)

_UNITS = (
    (86400, "1 day", "{count} days"),
    (3600, "1 hour", "{count} hours"),
    (60, "1 minute", "{count} minutes"),
    (1, "1 second", "{count} seconds"),
)


def span_words(span: timedelta) -> str:
    """``4 days``, ``1 day 2 hours``, ``0 seconds``; zh ``4 天``."""
    seconds = int(span.total_seconds())
    parts: list[str] = []
    for size, one, many in _UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(tr(one) if count == 1 else tr(many, count=count))
    return " ".join(parts) or tr("{count} seconds", count=0)


def alert_texts(notice: AlertNotice, name: str, schedule_id: int) -> tuple[str, str]:
    """An alert's notification: its title and body (``scheduler.alerts`` decides which)."""
    error = notice.error or tr("no reason given")
    count = notice.failures
    if notice.kind is NoticeKind.failing:
        return tr("{name} failed", name=name), error
    if notice.kind is NoticeKind.still_failing:
        return (
            tr("{name} is still failing", name=name),
            tr("{count} failures in a row: {error}", count=count, error=error),
        )
    if notice.kind is NoticeKind.recovered:
        body = (
            tr("{name} works again after 1 failure.", name=name)
            if count == 1
            else tr("{name} works again after {count} failures.", name=name, count=count)
        )
        return tr("{name} works again", name=name), body
    if notice.kind is NoticeKind.paused:
        return tr("{name} is paused", name=name), tr(
            "Paused after {count} failures in a row ({error}). Turn it back on in the main window, "
            "or run: domi-desktop schedule enable {id}",
            count=count, error=error, id=schedule_id,
        )  # fmt: skip
    span = span_words(notice.stale_for or timedelta(0))
    return (
        tr("{name} has not succeeded for {span}", name=name, span=span),
        tr("No successful run for {span}.", span=span),
    )


def burst_text(total: int, limit: int) -> str | None:
    """The one notification of a catch-up burst; ``None`` when nothing was missed."""
    if total < 1:
        return None
    if total > limit:
        return tr(
            "{count} missed runs are catching up, {limit} at a time.", count=total, limit=limit
        )
    if total == 1:
        return tr("1 missed run is catching up.")
    return tr("{count} missed runs are catching up.", count=total)
