"""Light and dark: the app follows the system's colour scheme, and our own colours follow the app.

Qt 6.5+ reports the system's scheme (``QStyleHints.colorScheme()``) and its changes. Where the
platform's style does not switch palettes by itself (Fusion on many Linux desktops), ``follow_system``
installs a dark palette. Our few colours of meaning (errors, DST days, late runs, skipped runs) are
read from ``colors()`` each time they are painted, which answers for the palette actually shown, so
they never end up dark red on dark grey.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette


@dataclass(frozen=True)
class Colors:
    error: QColor
    """Messages that block saving, failed runs."""
    dst: QColor
    """A day on which the clocks change."""
    late: QColor
    """Late or interrupted runs."""
    muted: QColor
    """Skipped runs: the bulk after a long sleep, greyed so the runs that ran stand out."""


LIGHT = Colors(
    error=QColor("#c62828"), dst=QColor("#b26a00"), late=QColor("#b06d00"), muted=QColor("#8a8a8a")
)
DARK = Colors(
    error=QColor("#ff7b72"), dst=QColor("#f0b24a"), late=QColor("#e3a33b"), muted=QColor("#9a9a9a")
)
"""Each readable (WCAG contrast >= 4.5) on the window colour of its own palette."""

_DARK_ROLES = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e8e8e8",
    QPalette.ColorRole.Base: "#1f1f1f",
    QPalette.ColorRole.AlternateBase: "#2a2a2a",
    QPalette.ColorRole.ToolTipBase: "#3a3a3a",
    QPalette.ColorRole.ToolTipText: "#e8e8e8",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
    QPalette.ColorRole.Text: "#e8e8e8",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#e8e8e8",
    QPalette.ColorRole.BrightText: "#ff7b72",
    QPalette.ColorRole.Highlight: "#2f65ca",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#79b8ff",
    QPalette.ColorRole.LinkVisited: "#b392f0",
    QPalette.ColorRole.Light: "#4a4a4a",
    QPalette.ColorRole.Midlight: "#3f3f3f",
    QPalette.ColorRole.Mid: "#2f2f2f",
    QPalette.ColorRole.Dark: "#1a1a1a",
    QPalette.ColorRole.Shadow: "#000000",
}
_DISABLED_TEXT = "#7a7a7a"


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, color in _DARK_ROLES.items():
        palette.setColor(role, QColor(color))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DISABLED_TEXT))
    return palette


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether ``palette`` (the app's by default) shows light text on a dark window."""
    shown = palette if palette is not None else QGuiApplication.palette()
    window = shown.color(QPalette.ColorRole.Window)
    text = shown.color(QPalette.ColorRole.WindowText)
    return window.lightness() < text.lightness()


def colors(palette: QPalette | None = None) -> Colors:
    return DARK if is_dark(palette) else LIGHT


def css_color(color: QColor) -> str:
    """``color: #rrggbb;`` for a style sheet."""
    return f"color: {color.name()};"


class _Follower:
    """Keeps the palette the platform gave, to give it back when the system turns light again."""

    def __init__(self, app: QGuiApplication) -> None:
        self._app = app
        self._platform: QPalette | None = None

    def apply(self, scheme: Qt.ColorScheme) -> None:
        if scheme is Qt.ColorScheme.Dark and self._platform is None and not is_dark():
            self._platform = QPalette(self._app.palette())
            self._app.setPalette(dark_palette())
        elif scheme is Qt.ColorScheme.Light and self._platform is not None:
            self._app.setPalette(self._platform)
            self._platform = None


_follower: _Follower | None = None


def _the_follower(app: QGuiApplication) -> _Follower:
    global _follower
    if _follower is None:
        _follower = _Follower(app)
    return _follower


def follow_system(app: QGuiApplication) -> None:
    """Use a dark palette while the system's scheme is dark, now and whenever it changes."""
    follower = _the_follower(app)
    hints = app.styleHints()
    follower.apply(hints.colorScheme())
    hints.colorSchemeChanged.connect(follower.apply)


def apply_scheme(app: QGuiApplication, scheme: Qt.ColorScheme) -> None:
    """What ``follow_system`` does when the system's scheme changes to ``scheme``."""
    _the_follower(app).apply(scheme)
