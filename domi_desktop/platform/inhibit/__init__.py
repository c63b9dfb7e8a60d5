"""Sleep inhibitors: keep the machine awake while a job with ``keep_awake`` runs.

The runtime acquires one when such a job starts and releases it in the ``finally`` of the run,
whatever ends it (success, failure, timeout kill, the app quitting).
"""

from __future__ import annotations

import sys

from domi_desktop.platform.inhibit.base import UnsupportedSleepInhibitor
from domi_desktop.ports import SleepInhibitor


def sleep_inhibitor_for_platform(platform: str = sys.platform) -> SleepInhibitor:
    """The inhibitor of ``platform``; each is imported only here, so no OS loads another's."""
    if platform.startswith("linux"):
        from domi_desktop.platform.inhibit.linux import LogindSleepInhibitor

        return LogindSleepInhibitor()
    if platform == "win32":
        from domi_desktop.platform.inhibit.windows import ExecutionStateInhibitor

        return ExecutionStateInhibitor()
    if platform == "darwin":
        from domi_desktop.platform.inhibit.macos import AssertionSleepInhibitor

        return AssertionSleepInhibitor()
    return UnsupportedSleepInhibitor(platform)


def delay_inhibitor_for_platform(platform: str = sys.platform) -> SleepInhibitor | None:
    """A lock that holds a sleep back a few seconds after the OS said it is coming (logind's
    ``delay`` mode); ``None`` where the OS has none (Windows and macOS give a moment of their
    own after their sleep notice)."""
    if platform.startswith("linux"):
        from domi_desktop.platform.inhibit.linux import LogindSleepInhibitor

        return LogindSleepInhibitor(mode="delay")
    return None
