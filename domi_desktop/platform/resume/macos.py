"""macOS: ``NSWorkspaceDidWakeNotification`` and ``NSWorkspaceWillSleepNotification`` through pyobjc.

pyobjc exists only on macOS, so it is imported in ``start`` and this module imports anywhere.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Protocol

from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.ports import PowerEvent

# The notification names are these very strings (AppKit's constants are NSStrings with this text).
DID_WAKE = "NSWorkspaceDidWakeNotification"
WILL_SLEEP = "NSWorkspaceWillSleepNotification"
_EVENTS: dict[str, PowerEvent] = {DID_WAKE: "resume", WILL_SLEEP: "sleep"}

TEST_WAKE_SIGNAL = "DOMI_TEST_WAKE_SIGNAL"
"""For the release's smoke tests only: when set, SIGUSR1 posts ``DID_WAKE`` to the workspace's
center inside the app. The system posts it to the sleeping process alone (no other process can),
and the runners cannot sleep; this drives the real observer, its queue and its block."""


class Notification(Protocol):
    """What is used of an ``NSNotification``, as pyobjc names its selectors."""

    def name(self) -> str: ...


class NotificationCenter(Protocol):
    """What is used of ``NSWorkspace.sharedWorkspace().notificationCenter()``."""

    def addObserverForName_object_queue_usingBlock_(
        self, name: str, sender: object, queue: object, block: Callable[[Notification], None], /
    ) -> object: ...

    def removeObserver_(self, observer: object, /) -> None: ...

    def postNotificationName_object_(self, name: str, sender: object, /) -> None: ...


class WorkspaceWakeResumeSource:
    """Reports sleep and wake posted to the shared ``NSWorkspace``'s notification center.

    Only that center carries them (not the default one), and the blocks run on the main operation
    queue: the main thread, whose run loop Qt's Cocoa event loop drives.
    """

    def __init__(self) -> None:
        self.status = "not started"
        self._callbacks: PowerCallbacks | None = None
        self._center: NotificationCenter | None = None
        self._observers: list[object] = []
        self._signal_before: list[Any] = []
        """SIGUSR1's handler before the test hook took it, while it has it."""

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        self.stop()
        try:
            appkit = importlib.import_module("AppKit")
        except ImportError as error:
            self.status = f"pyobjc (AppKit) is not installed, so no wake notifications: {error}"
            return False
        self._callbacks = PowerCallbacks("NSWorkspace", on_resume, on_sleep)
        center: NotificationCenter = appkit.NSWorkspace.sharedWorkspace().notificationCenter()
        queue = appkit.NSOperationQueue.mainQueue()
        self._observers = [
            center.addObserverForName_object_queue_usingBlock_(
                name, None, queue, self._on_notification
            )
            for name in _EVENTS
        ]
        self._center = center
        self.status = "listening to NSWorkspace sleep and wake notifications"
        if sys.platform != "win32" and os.environ.get(TEST_WAKE_SIGNAL):
            # The app's signal bridge (qtloop) wakes the Qt loop for it, so Python runs it soon.
            self._signal_before = [
                signal.signal(
                    signal.SIGUSR1,
                    lambda _number, _frame: center.postNotificationName_object_(DID_WAKE, None),
                )
            ]
            self.status += f" (SIGUSR1 posts a wake: {TEST_WAKE_SIGNAL} is set)"
        return True

    def stop(self) -> None:
        if sys.platform != "win32" and self._signal_before:
            signal.signal(signal.SIGUSR1, self._signal_before.pop())
        if self._center is not None:
            for observer in self._observers:
                self._center.removeObserver_(observer)
        self._observers = []
        self._center = None
        self._callbacks = None

    def dispatch(self, notification_name: str) -> None:
        """Report the notification called ``notification_name``; other names are ignored."""
        event = _EVENTS.get(notification_name)
        if event is not None and self._callbacks is not None:
            self._callbacks.deliver(event)

    def _on_notification(self, notification: Notification) -> None:
        self.dispatch(str(notification.name()))
