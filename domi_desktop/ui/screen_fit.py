"""Windows that fit the screen they open on: a window's size is what it would like, within the
screen's free area (at 200 % on a 1920x1080 screen that is 960x540 logical pixels)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

SHARE = 0.92
"""Of the screen's free area a window takes at most: its frame and the panel's edge need room."""


def room_for(window: QWidget) -> QSize:
    """The largest size ``window`` should take on its screen."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry().size() * SHARE


def fit_to_screen(window: QWidget, wanted: QSize) -> None:
    """``window`` as ``wanted``, within its screen (never below its own minimum)."""
    room = room_for(window)
    least = window.minimumSize()
    window.resize(
        max(least.width(), min(wanted.width(), room.width())),
        max(least.height(), min(wanted.height(), room.height())),
    )
