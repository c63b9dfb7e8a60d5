"""The editor's line under "Wake the computer to run this": when the machine would be woken next
for the schedule as edited (the scheduler's own wake plan), or why this machine cannot be woken
and what would allow it."""

from __future__ import annotations

import functools
from datetime import datetime

from domi_desktop.cron import zone_for
from domi_desktop.errors import DomiError
from domi_desktop.model import CommandAction, Policies, Schedule, SystemState
from domi_desktop.scheduler.wake import wake_plan
from domi_desktop.ui.i18n import format_moment, register, tr

ON_BATTERY = SystemState(on_ac=False, battery_percent=40)


@functools.cache
def this_machine() -> str | None:
    """Why this machine cannot be woken (``None``: it can); asked of the OS once."""
    from domi_desktop.platform.wake import wake_alarm_for_platform

    return wake_alarm_for_platform().capability()


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
        at=format_moment(target.at.astimezone(zone)),
        due=format_moment(target.due.astimezone(zone)),
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
    },
)
