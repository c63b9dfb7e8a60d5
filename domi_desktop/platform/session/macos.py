"""macOS: the session's unlock, ``com.apple.screenIsUnlocked`` posted to the distributed
notification center (loginwindow posts it; Apple documents no public constant, and it is what
every macOS tool that reacts to an unlock listens for), through pyobjc.

pyobjc exists only on macOS, so it is imported in ``start`` and this module imports anywhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from domi_desktop.platform.resume.macos import Notification, NotificationCenter

SCREEN_UNLOCKED = "com.apple.screenIsUnlocked"


class ScreenUnlockSource:
    """The blocks run on the main operation queue: the main thread, whose run loop Qt's Cocoa
    event loop drives."""

    def __init__(self, center: NotificationCenter | None = None, queue: Any = None) -> None:
        """``center`` and ``queue``: tests pass stand-ins; by default AppKit's."""
        self.status = "not started"
        self._center = center
        self._queue = queue
        self._observer: object | None = None
        self._on_unlock: Callable[[], None] | None = None

    def start(self, on_unlock: Callable[[], None]) -> bool:
        self.stop()
        center, queue = self._center, self._queue
        if center is None:
            try:
                foundation = importlib.import_module("Foundation")
            except ImportError as error:
                self.status = f"pyobjc (Foundation) is not installed, so no unlock: {error}"
                return False
            center = foundation.NSDistributedNotificationCenter.defaultCenter()
            queue = foundation.NSOperationQueue.mainQueue()
        assert center is not None
        self._on_unlock = on_unlock
        self._observer = center.addObserverForName_object_queue_usingBlock_(
            SCREEN_UNLOCKED, None, queue, self._notified
        )
        self._center = center
        self.status = f"listening to {SCREEN_UNLOCKED}"
        return True

    def stop(self) -> None:
        if self._center is not None and self._observer is not None:
            self._center.removeObserver_(self._observer)
        self._observer = None
        self._on_unlock = None

    def _notified(self, notification: Notification) -> None:
        if str(notification.name()) == SCREEN_UNLOCKED and self._on_unlock is not None:
            self._on_unlock()
