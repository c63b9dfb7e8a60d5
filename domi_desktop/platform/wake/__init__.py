"""Wake alarms: have the OS wake the machine from sleep for a ``wake_to_run`` schedule.

The runtime arms one at the instant of ``scheduler.wake.wake_plan`` after every wake of the
scheduler (an edit, a resume, a clock or zone change, a fire) and cancels it when nothing needs one.
"""

from __future__ import annotations

import sys

from domi_desktop.ports import WakeAlarm
from domi_desktop.runtime.waking import NoWakeAlarm, WakeTools


def wake_alarm_for_platform(platform: str = sys.platform) -> WakeAlarm:
    """The alarm of ``platform``; each is imported only here, so no OS loads another's."""
    if platform.startswith("linux"):
        from domi_desktop.platform.wake.linux import linux_wake_alarm

        return linux_wake_alarm()
    if platform == "win32":
        from domi_desktop.platform.wake.windows import WaitableTimerWakeAlarm

        return WaitableTimerWakeAlarm()
    if platform == "darwin":
        return NoWakeAlarm(
            "waking a Mac needs the privileged helper (IOPMSchedulePowerEvent runs as root "
            "only; see docs/wake-on-macos.md)"
        )
    return NoWakeAlarm(f"cannot wake {platform}: no wake alarm for this OS")


def wake_tools_for_platform(platform: str = sys.platform) -> WakeTools:
    """The alarm, and what sends a machine the app woke back to sleep when nobody uses it."""
    alarm = wake_alarm_for_platform(platform)
    if platform.startswith("linux"):
        from domi_desktop.platform.wake.presence import linux_input_watch
        from domi_desktop.platform.wake.sleeper import linux_sleeper

        return WakeTools(alarm, linux_input_watch(), linux_sleeper())
    if platform in ("win32", "darwin"):
        from domi_desktop.platform.wake.sleeper import OsSleeper

        # The OS sleeps an unattended machine again by itself; input is its business.
        how = (
            "left to Windows: it sleeps a machine a timer woke once it is idle a few minutes"
            if platform == "win32"
            else "left to macOS: it sleeps a machine a scheduled wake woke once it is idle"
        )
        return WakeTools(alarm, _Unattended(), OsSleeper(how))
    return WakeTools(alarm)


class _Unattended:
    """Windows and macOS judge the unattended wake themselves: to the app, no input ever counts."""

    status = "judged by the OS"

    def mark(self) -> None:
        pass

    def input_since_mark(self, woke_at: object) -> bool | None:
        return False
