"""Every window of the app opened on this display, each one's frame and its screen's free area
printed as a JSON line: ``{"window": name, "frame": [x, y, w, h], "room": [x, y, w, h]}``, then
``{"done": true}``. Run by test_windows_fit.py under a screen and scale of its choosing."""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication, QStyle, QTableView, QWidget  # noqa: E402

from domi_desktop.model import CommandAction, HttpAction  # noqa: E402
from domi_desktop.platform.timezone import install_os_zone  # noqa: E402
from domi_desktop.secrets import MemorySecretStore  # noqa: E402
from domi_desktop.store import Store  # noqa: E402


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def cut_headers(table: QTableView) -> list[str]:
    """The titles of the table's shown columns narrower than their own words."""
    header = table.horizontalHeader()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin)
    font = header.font()
    font.setBold(True)
    bold = QFontMetrics(font)
    cut = []
    for section in range(header.count()):
        title = str(header.model().headerData(section, Qt.Orientation.Horizontal))
        # The title, bold as the header draws it over a selected row, and the style's margins.
        needed = bold.horizontalAdvance(title) + 2 * margin
        if not header.isSectionHidden(section) and header.sectionSize(section) < needed:
            cut.append(title)
    return cut


def tell(name: str, window: QWidget) -> None:
    QApplication.processEvents()
    screen = window.screen()
    table = window.findChild(QTableView, "schedulesTable")
    print(json.dumps({"window": name, "frame": rect(window.frameGeometry()),
                      "room": rect(screen.availableGeometry()),
                      "scale": screen.devicePixelRatio(),
                      "cut_headers": [] if table is None else cut_headers(table)}),
          flush=True)  # fmt: skip


def main() -> None:
    from domi_desktop.ui.i18n import set_language
    from domi_desktop.ui.tray import TrayApp
    from tests.support.engine import running_engine

    install_os_zone()
    app = QApplication(sys.argv[:1])
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as temp, Store.open(Path(temp), now=now) as store:
        store.create_schedule("Backup", "30 2 * * *", "local",
                              CommandAction(shell="restic backup ~/work"), now=now)  # fmt: skip
        store.create_schedule("Digest", "0 17 * * fri", "America/New_York",
                              HttpAction(url="https://hooks.example.com/digest"), now=now)  # fmt: skip
        with running_engine(store, secrets=MemorySecretStore({})) as engine:
            tray = TrayApp(app, engine.handle)
            # After the tray, which applies the saved settings' language (English here).
            set_language(sys.argv[1] if len(sys.argv) > 1 else "en")
            tray.show_main_window()
            tray.main_window.select(1)
            tell("schedules", tray.main_window)
            tray.open_history(None)
            tell("history", tray._windows["history"])
            tray.open_timeline()
            tell("timeline", tray._windows["timeline"])
            tray.open_settings()
            tell("settings", tray._windows["settings"])
            tray.open_editor(None)
            tell("editor new", tray._windows["editor"])
            tray._windows["editor"].close()
            tray.open_editor(2)
            tell("editor http", tray._windows["editor"])
            for window in list(tray._windows.values()):
                window.close()
            tray.close()
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    main()
