"""The editor's line under "Wake the computer to run this": when the machine would be woken next
for the schedule as edited (the scheduler's own wake plan), or why this machine cannot be woken
and what would allow it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from domi_desktop.cron import zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import CommandAction, Policies, Schedule, SystemState
from domi_desktop.scheduler.wake import wake_plan
from domi_desktop.ui.i18n import format_moment, register, tr

ON_BATTERY = SystemState(on_ac=False, battery_percent=40)


@dataclass(frozen=True)
class WakeWay:
    """How this machine is woken (``via``, the alarm's own words), or why it cannot be."""

    via: str | None
    why_not: str | None


VIAS = (
    "a systemd user timer (WakeSystem=yes)",
    "a CLOCK_REALTIME_ALARM timer",
    "the RTC alarm",
    "a Windows waitable timer",
)
"""The alarms' ``via`` (``platform.wake``), each translated."""


@functools.cache
def this_machine_way() -> WakeWay:
    """Asked of the OS once."""
    from domi_desktop.platform.wake import wake_alarm_for_platform

    alarm = wake_alarm_for_platform()
    why_not = alarm.capability()
    via = getattr(alarm, "via", None) if why_not is None else None
    return WakeWay(via if isinstance(via, str) else None, why_not)


def this_machine() -> str | None:
    """Why this machine cannot be woken (``None``: it can)."""
    return this_machine_way().why_not


def way_words(way: WakeWay) -> str:
    """The line beside the checkbox: how the machine will be woken, or why it cannot be."""
    if way.why_not is not None:
        return tr("This computer cannot be woken: {reason}.", reason=way.why_not)
    if way.via is None:
        return tr("This computer can be woken.")
    via = tr(way.via) if way.via in VIAS else way.via
    return tr("Woken by {via}.", via=via)


def wake_sentence(
    expr: str, tz: str, policies: Policies, now: datetime, why_not: str | None
) -> str:
    """What waking does for this schedule, in the app's language."""
    if why_not is not None:
        return tr("This computer cannot be woken: {reason}.", reason=why_not)
    schedule = Schedule(
        0, "", expr, tz, CommandAction(argv=("true",)), policies=policies, last_due=now
    )
    try:
        target = wake_plan([schedule], SystemState(), now)
        zone = zone_for(tz)
    except DomiError:
        target = None
    if target is None:
        return tr("No upcoming run to wake the computer for.")
    text = tr(
        "Wakes the computer at {at} for the run due {due}.",
        at=format_moment(target.at.astimezone(zone), year=target.at.year != now.year),
        due=format_moment(target.due.astimezone(zone), year=target.due.year != now.year),
    )
    if wake_plan([schedule], ON_BATTERY, now) is None:
        text += " " + tr("Not on battery: the run waits for the charger.")
    return text


register(
    "zh",
    {
        "Wake the computer to run this": "唤醒电脑来运行它",
        "This computer cannot be woken: {reason}.": "无法唤醒这台电脑：{reason}。",
        "No upcoming run to wake the computer for.": "没有即将到来的运行需要唤醒电脑。",
        "Wakes the computer at {at} for the run due {due}.": "将在 {at} 唤醒电脑，运行 {due} 到期的任务。",
        "Not on battery: the run waits for the charger.": "使用电池时不唤醒：运行会等待充电器。",
        "This computer can be woken.": "这台电脑可以被唤醒。",
        "Woken by {via}.": "通过{via}唤醒。",
        "a systemd user timer (WakeSystem=yes)": "systemd 用户定时器（WakeSystem=yes）",
        "a CLOCK_REALTIME_ALARM timer": "CLOCK_REALTIME_ALARM 定时器",
        "the RTC alarm": "RTC 闹钟",
        "a Windows waitable timer": "Windows 可等待定时器",
    },
)
