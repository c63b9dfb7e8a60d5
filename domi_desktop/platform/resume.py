"""Resume-from-sleep signals: one source per OS behind one small interface.

A source only reports. The app re-plans from the wall clock on every report, so a duplicate report
is harmless, and the wall/monotonic gap detector still catches a wake that a source misses.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Literal, Protocol

PowerEvent = Literal["resume", "sleep"]

_log = logging.getLogger(__name__)


class ResumeSource(Protocol):
    status: str
    """What the source is doing, or why it cannot: for the log and the Settings window."""

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        """Begin reporting on the Qt thread; ``False`` (reason in ``status``) when unavailable."""
        ...

    def stop(self) -> None: ...


class PowerCallbacks:
    """The callbacks a started source reports to; each event is logged once, here."""

    def __init__(
        self, source: str, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None
    ) -> None:
        self._source = source
        self._on_resume = on_resume
        self._on_sleep = on_sleep

    def deliver(self, event: PowerEvent) -> None:
        if event == "resume":
            _log.info("%s: the machine woke from sleep", self._source)
            self._on_resume()
        else:
            _log.info("%s: the machine is going to sleep", self._source)
            if self._on_sleep is not None:
                self._on_sleep()


class UnsupportedResumeSource:
    """An OS without a source of ours: the gap detector alone notices wakes there."""

    def __init__(self, platform: str) -> None:
        self.status = (
            f"no resume-from-sleep signal on {platform}; wakes are noticed by the clock gap alone"
        )

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        return False

    def stop(self) -> None:
        pass


def resume_source_for_platform(platform: str = sys.platform) -> ResumeSource:
    """The source of ``platform``; each is imported only here, so no OS loads another's modules."""
    if platform.startswith("linux"):
        from domi_desktop.platform.resume_linux import LogindResumeSource

        return LogindResumeSource()
    if platform == "win32":
        from domi_desktop.platform.resume_windows import PowerBroadcastResumeSource

        return PowerBroadcastResumeSource()
    if platform == "darwin":
        from domi_desktop.platform.resume_macos import WorkspaceWakeResumeSource

        return WorkspaceWakeResumeSource()
    return UnsupportedResumeSource(platform)
