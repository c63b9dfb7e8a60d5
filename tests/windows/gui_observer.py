"""The real tray app (``domi-desktop`` with no command) with a reader of its Schedules window.

    python tests/windows/gui_observer.py

Started by tests/windows/test_gui_on_windows.py: the app is the one a user starts, on Qt's own
platform (a real Win32 window, under Wine too); the reader only looks. Each time what the window
shows changes it prints one JSON line, {"hwnd": ..., "rows": [titles]}, "rows" null while the
window is not shown. It never asks the window to reload: a row appears only if the app's own
change notices put it there.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from domi_desktop.cli import main
from domi_desktop.ui.main_window import MainWindow
from domi_desktop.ui.schedule_model import Column

LOOK_EVERY_MS = 200


def shown(app: QApplication) -> dict[str, object]:
    for widget in app.topLevelWidgets():
        if isinstance(widget, MainWindow) and widget.isVisible():
            proxy = widget.proxy
            rows = [proxy.index(row, Column.title).data() for row in range(proxy.rowCount())]
            return {"hwnd": int(widget.winId()), "rows": rows}
    return {"hwnd": None, "rows": None}


def report_changes(app: QApplication) -> QTimer:
    last: list[dict[str, object]] = []

    def look() -> None:
        now = shown(app)
        if last != [now]:
            last[:] = [now]
            print(json.dumps(now), flush=True)

    timer = QTimer(app)
    timer.timeout.connect(look)
    timer.start(LOOK_EVERY_MS)
    return timer


if __name__ == "__main__":
    # The app takes the QApplication that exists; the reader's timer needs it first.
    application = QApplication(sys.argv[:1])
    reader = report_changes(application)
    sys.exit(main([]))
