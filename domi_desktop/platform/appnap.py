"""macOS App Nap: one ``NSProcessInfo`` activity held for the app's life.

App Nap throttles the timers of an app none of whose windows shows, which a tray app's never do: its
60 s wake timer would fire minutes late, and a job with it. ``NSAppSleepDisabled`` in Info.plist is
not honoured for that (nor does it cover ``python -m domi_desktop``); an activity begun with
``beginActivityWithOptions:reason:`` is, for as long as its token lives. The options are
``NSActivityUserInitiatedAllowingIdleSystemSleep``: no App Nap, while the Mac may still sleep when
idle (keeping it awake is the ``keep_awake`` condition's business, per job).

pyobjc is imported in ``start``, so this module imports on every OS; ``process_info`` is for tests.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Protocol

ACTIVITY_USER_INITIATED = 0x00FFFFFF
ACTIVITY_IDLE_SYSTEM_SLEEP_DISABLED = 1 << 20
ACTIVITY_OPTIONS = ACTIVITY_USER_INITIATED & ~ACTIVITY_IDLE_SYSTEM_SLEEP_DISABLED
"""``NSActivityUserInitiatedAllowingIdleSystemSleep`` (NSProcessInfo.h)."""
REASON = "domi-desktop runs scheduled jobs on time"


class Activity(Protocol):
    """The opaque token ``beginActivityWithOptions:reason:`` returns (an ``NSObject``)."""


class ProcessInfo(Protocol):
    """What is used of ``NSProcessInfo.processInfo()``, as pyobjc names its selectors."""

    def beginActivityWithOptions_reason_(self, options: int, reason: str, /) -> Activity: ...

    def endActivity_(self, activity: Activity, /) -> None: ...


def _process_info() -> ProcessInfo:
    foundation = importlib.import_module("Foundation")
    info: ProcessInfo = foundation.NSProcessInfo.processInfo()
    return info


class AppNapActivity:
    """``start`` begins the activity (macOS only), ``stop`` ends it; ``status`` says which."""

    def __init__(
        self,
        *,
        platform: str = sys.platform,
        process_info: Callable[[], ProcessInfo] = _process_info,
    ) -> None:
        self.status = "not started"
        self._platform = platform
        self._process_info = process_info
        self._held: tuple[ProcessInfo, Activity] | None = None

    def start(self) -> bool:
        self.stop()
        if self._platform != "darwin":
            self.status = f"App Nap exists only on macOS, not on {self._platform}"
            return False
        try:
            info = self._process_info()
        except (ImportError, AttributeError) as error:
            self.status = (
                f"pyobjc (Foundation) is not installed, so App Nap may slow the timers: {error}"
            )
            return False
        # The token must stay referenced: the activity ends when it is released.
        self._held = (info, info.beginActivityWithOptions_reason_(ACTIVITY_OPTIONS, REASON))
        self.status = "an NSProcessInfo activity keeps App Nap off"
        return True

    def stop(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            info, activity = held
            info.endActivity_(activity)
            self.status = "stopped"
