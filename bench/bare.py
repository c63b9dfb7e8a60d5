"""The baseline the benches measure the app beside: a bare PySide6 tray icon with a menu."""

BARE_TRAY = """
import sys
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QMenu
from PySide6.QtGui import QIcon, QPixmap, QColor
app = QApplication(sys.argv)
pixmap = QPixmap(22, 22); pixmap.fill(QColor("#3b82f6"))
tray = QSystemTrayIcon(QIcon(pixmap)); menu = QMenu(); menu.addAction("Quit", app.quit)
tray.setContextMenu(menu); tray.show()
app.exec()
"""
