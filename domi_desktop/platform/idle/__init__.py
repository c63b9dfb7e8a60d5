"""Is the user at the computer? The session's idle time and presence, per OS, for the schedules
that run only when the user has stepped away (``Conditions.away``).

Linux asks, in order, GNOME's ``org.gnome.Mutter.IdleMonitor``, ``org.freedesktop.ScreenSaver``
(KDE and others), the X11 screensaver extension, and logind's ``IdleHint`` as the last resort; an
idle inhibitor held by another app (GNOME's session manager, logind's ``BlockInhibited``) counts
as present. Windows: ``GetLastInputInfo`` and ``SHQueryUserNotificationState``. macOS:
``CGEventSourceSecondsSinceLastEventType``. ``StandInIdle`` stands in for tests.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import timedelta

from domi_desktop.model import Presence

IdleReading = Callable[[], timedelta]
"""One source's idle time; raises ``OSError`` (or a ``BusError``) when it cannot tell."""


class ChainIdle:
    """The first source of ``sources`` that answers gives the idle time; every one of
    ``presence`` that answers may say an app holds off the screensaver."""

    def __init__(
        self,
        sources: Sequence[tuple[str, IdleReading]],
        presence: Sequence[tuple[str, Callable[[], bool]]] = (),
    ) -> None:
        self._sources = list(sources)
        self._presence = list(presence)
        self.status = "not read yet"

    def read(self) -> Presence:
        idle: timedelta | None = None
        failed: list[str] = []
        for name, reading in self._sources:
            try:
                idle = reading()
            except Exception as error:
                failed.append(f"{name}: {error}")
                continue
            self.status = f"idle time from {name}"
            break
        else:
            self.status = "no idle time: " + ("; ".join(failed) or "no source")
        presenting = False
        for _, holds in self._presence:
            try:
                presenting = presenting or holds()
            except Exception:
                continue
        return Presence(idle, presenting)


class StandInIdle:
    """The session as a test sets it."""

    status = "stand-in"

    def __init__(self, idle: timedelta | None = None, presenting: bool = False) -> None:
        self.presence = Presence(idle, presenting)

    def read(self) -> Presence:
        return self.presence


def idle_source_for_platform(platform: str = sys.platform) -> ChainIdle:
    if platform.startswith("linux"):
        from domi_desktop.platform.idle import linux

        return ChainIdle(linux.SOURCES, linux.PRESENCE)
    if platform == "win32":
        from domi_desktop.platform.idle import windows

        return ChainIdle(windows.SOURCES, windows.PRESENCE)
    if platform == "darwin":
        from domi_desktop.platform.idle import macos

        return ChainIdle(macos.SOURCES)
    return ChainIdle(())
