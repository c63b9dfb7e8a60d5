"""Buttons show the desktop theme's icons, or none: without an icon theme that has them, Qt
draws its own fallback pictures (coloured discs) on OK, Cancel, Apply and Save, which look like
nothing else on the desktop."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory

THEMED = ("dialog-ok", "dialog-cancel", "dialog-ok-apply", "document-save")
"""The icons Qt would put on a dialog's standard buttons, by their theme names."""


class ThemeIconsOnly(QProxyStyle):
    """The app's style, but a dialog's buttons carry no icon of Qt's own."""

    def styleHint(
        self, hint: QStyle.StyleHint, option: Any = None, widget: Any = None, data: Any = None
    ) -> int:
        if hint == QStyle.StyleHint.SH_DialogButtonBox_ButtonsHaveIcons:
            return 0
        return int(super().styleHint(hint, option, widget, data))


def theme_icons_only(app: QApplication) -> bool:
    """Without the theme's icons for a dialog's buttons, none at all; True when it changed the
    style. Call it before the palette is set (a new style brings its own)."""
    if all(QIcon.hasThemeIcon(name) for name in THEMED):
        return False
    base = QStyleFactory.create(app.style().name())
    app.setStyle(ThemeIconsOnly(base))
    return True
