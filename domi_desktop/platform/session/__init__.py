"""The session's unlock, for the ``at_unlock`` trigger: one source per OS behind ``ports.UnlockSource``
(logind and the screen lockers on Linux, ``WTS_SESSION_UNLOCK`` on Windows, the screen-unlocked
distributed notification on macOS)."""

from __future__ import annotations

import sys

from domi_desktop.ports import UnlockSource


class UnsupportedUnlockSource:
    def __init__(self, platform: str) -> None:
        self.status = f"no unlock signal on {platform}"

    def start(self, on_unlock: object) -> bool:
        return False

    def stop(self) -> None:
        pass


def unlock_source_for_platform(platform: str = sys.platform) -> UnlockSource:
    if platform.startswith("linux"):
        from domi_desktop.platform.session.linux import LinuxUnlockSource

        return LinuxUnlockSource()
    if platform == "win32":
        from domi_desktop.platform.session.windows import SessionWindowUnlockSource

        return SessionWindowUnlockSource()
    if platform == "darwin":
        from domi_desktop.platform.session.macos import ScreenUnlockSource

        return ScreenUnlockSource()
    return UnsupportedUnlockSource(platform)
