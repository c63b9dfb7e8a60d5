"""The real tray app (``python -m domi_desktop``), and what a test cannot read from outside it: the
rows the History window shows.

While a History window is visible, every 200 ms, its table is read as the view paints it (the
texts of each row, and which run the row is) and printed as one JSON line when it changed:
``{"event": "history", "window": ..., "count": "12 runs", "rows": [{"id": 7, "texts": [...]}]}``.
Nothing else is added: the app creates no QApplication of its own when one exists, and this one
is made exactly as the app makes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

LOOK_MS = 200
# The checkout this file is in, as ``python -m domi_desktop`` run from it would import.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def shown(window: Any) -> dict[str, Any]:
    rows = window.rows  # the table's model (ShownRows): what the view paints
    found = []
    for row in range(rows.rowCount()):
        texts = [rows.item(row, column).text() for column in range(rows.columnCount())]
        found.append({"id": window.model.run_at(row).id, "texts": texts})
    return {
        "event": "history",
        "window": id(window),
        "count": window.run_count.text(),
        "rows": found,
    }


def main() -> int:
    app = QApplication(sys.argv[:1])
    last: list[dict[str, Any] | None] = [None]

    def look() -> None:
        for widget in app.topLevelWidgets():
            if isinstance(widget, QWidget) and widget.objectName() == "historyWindow":
                if not widget.isVisible():
                    continue
                now = shown(widget)
                if now != last[0]:
                    last[0] = now
                    print(json.dumps(now), flush=True)

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(LOOK_MS)
    from domi_desktop.cli import main as domi

    return domi([])


if __name__ == "__main__":
    sys.exit(main())
