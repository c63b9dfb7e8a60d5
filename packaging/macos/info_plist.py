"""The Info.plist keys of domi-desktop.app, read by packaging/domi-desktop.spec (and its tests).

A file of its own so that the values can be checked without building on macOS: the spec passes
``info_plist(version)`` to PyInstaller's BUNDLE, which writes them into Contents/Info.plist.
"""

from __future__ import annotations

MINIMUM_MACOS = "13.0"
"""PySide6 6.11's wheels are built for macOS 13 (Ventura) and newer: Launch Services refuses to
start the app on an older system instead of letting Qt crash at load."""


def info_plist(name: str, version: str) -> dict[str, object]:
    return {
        "CFBundleName": name,
        "CFBundleDisplayName": name,
        "CFBundleShortVersionString": version,
        "CFBundleVersion": version,
        "LSMinimumSystemVersion": MINIMUM_MACOS,
        "LSUIElement": True,  # a menu-bar (tray) app: no Dock icon, no app menu
        # App Nap would throttle the timers of an app with no visible window, the scheduler's
        # included: a job due at 09:00 would fire late or in a batch.
        "NSAppSleepDisabled": True,
        "NSHighResolutionCapable": True,
        "NSRequiresAquaSystemAppearance": False,  # follow dark mode
        "NSHumanReadableCopyright": "MIT License",
    }
