"""What every resume source shares: the callbacks it reports to, and the source of an OS we lack."""

from __future__ import annotations

import logging
from collections.abc import Callable

from domi_desktop.ports import PowerEvent, ResumeSource

_log = logging.getLogger("domi_desktop.platform.resume")


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


class EitherResumeSource:
    """The first of two sources that starts (Linux: logind where it runs, else the kernel)."""

    def __init__(self, first: ResumeSource, second: ResumeSource) -> None:
        self.sources = (first, second)
        self.status = "not started"
        self._running: ResumeSource | None = None

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        first, second = self.sources
        if first.start(on_resume, on_sleep):
            self._running, self.status = first, first.status
            return True
        started = second.start(on_resume, on_sleep)
        self._running = second if started else None
        self.status = f"{first.status}; {second.status}"
        return started

    def stop(self) -> None:
        if self._running is not None:
            self._running.stop()
        self._running = None
