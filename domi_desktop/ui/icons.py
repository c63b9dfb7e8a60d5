"""The app's icons, found in a PyInstaller bundle, next to the sources, or installed."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon


def resources_dir() -> Path:
    """The icons: in a PyInstaller bundle, next to the sources, or installed with the package."""
    candidates = [
        Path(__file__).resolve().parents[2] / "resources",
        Path(sys.prefix) / "share" / "domi-desktop" / "resources",
    ]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        # Only a frozen app has it; unset, Path("") would be the working directory, and a
        # "resources" folder there (any checkout's) would win over the app's own icons.
        candidates.insert(0, Path(bundle) / "resources")
    return next((path for path in candidates if (path / "domi-idle.svg").exists()), candidates[1])


def load_icon(name: str) -> QIcon:
    """``domi-<name>``, from its file and without a theme name: a StatusNotifierItem then
    publishes its pixels only. A name would be published too, and lxqt-panel draws a named icon
    only when its theme holds that name (ours is in none), never falling back to the pixels."""
    icon = QIcon(str(resources_dir() / f"domi-{name}.svg"))
    if sys.platform == "darwin" and name == "template":
        icon.setIsMask(True)
    return icon
