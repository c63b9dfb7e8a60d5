"""What every sleep inhibitor shares: the handle that does nothing, and the inhibitor of an OS we
lack.

Every OS ties an inhibitor to our process (logind's fd, an IOPM assertion, the thread's execution
state), so one that is never released ends with the process, crash or not.
"""

from __future__ import annotations

from domi_desktop.ports import InhibitorHandle


class NoInhibition:
    """The handle of an inhibitor the OS refused: releasing it does nothing."""

    def release(self) -> None:
        pass


class UnsupportedSleepInhibitor:
    def __init__(self, platform: str) -> None:
        self.status = f"cannot keep {platform} awake: no sleep inhibitor for this OS"

    def acquire(self, why: str) -> InhibitorHandle:
        return NoInhibition()
