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
    icon = QIcon(str(resources_dir() / f"domi-{name}.svg"))
    if sys.platform == "darwin" and name == "template":
        icon.setIsMask(True)
    return icon
