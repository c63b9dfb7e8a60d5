"""macOS: ``NSWorkspaceDidWakeNotification`` and ``NSWorkspaceWillSleepNotification`` through pyobjc.

pyobjc exists only on macOS, so it is imported in ``start`` and this module imports anywhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from domi_desktop.platform.resume.base import PowerCallbacks
from domi_desktop.ports import PowerEvent

# The notification names are these very strings (AppKit's constants are NSStrings with this text).
DID_WAKE = "NSWorkspaceDidWakeNotification"
WILL_SLEEP = "NSWorkspaceWillSleepNotification"
_EVENTS: dict[str, PowerEvent] = {DID_WAKE: "resume", WILL_SLEEP: "sleep"}


class WorkspaceWakeResumeSource:
    """Reports sleep and wake posted to the shared ``NSWorkspace``'s notification center.

    Only that center carries them (not the default one), and the blocks run on the main operation
    queue: the main thread, whose run loop Qt's Cocoa event loop drives.
    """

    def __init__(self) -> None:
        self.status = "not started"
        self._callbacks: PowerCallbacks | None = None
        self._center: Any = None
        self._observers: list[Any] = []

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
        self._center = appkit.NSWorkspace.sharedWorkspace().notificationCenter()
        queue = appkit.NSOperationQueue.mainQueue()
        self._observers = [
            self._center.addObserverForName_object_queue_usingBlock_(
                name, None, queue, self._on_notification
            )
            for name in _EVENTS
        ]
        self.status = "listening to NSWorkspace sleep and wake notifications"
        return True

    def stop(self) -> None:
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

    def _on_notification(self, notification: Any) -> None:
        self.dispatch(str(notification.name()))
