"""The app's icons, found in a PyInstaller bundle, next to the sources, or installed."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon


def resources_dir() -> Path:
    """The icons: in a PyInstaller bundle, next to the sources, or installed with the package."""
    candidates = [
        Path(getattr(sys, "_MEIPASS", "")) / "resources",
        Path(__file__).resolve().parents[2] / "resources",
        Path(sys.prefix) / "share" / "domi-desktop" / "resources",
    ]
    return next((path for path in candidates if (path / "domi-idle.svg").exists()), candidates[1])


def load_icon(name: str) -> QIcon:
    """``domi-<name>``, by name: a StatusNotifierItem then publishes its ``IconName`` (a panel,
    a test or a screen reader can tell "running" from "idle"), its pixels as before."""
    folder = str(resources_dir())
    if folder not in QIcon.fallbackSearchPaths():
        QIcon.setFallbackSearchPaths([*QIcon.fallbackSearchPaths(), folder])
    icon = QIcon.fromTheme(f"domi-{name}")
    if icon.isNull():
        icon = QIcon(str(resources_dir() / f"domi-{name}.svg"))
    if sys.platform == "darwin" and name == "template":
        icon.setIsMask(True)
    return icon
