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

from PySide6.QtCore import QRect  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from domi_desktop.model import CommandAction, HttpAction  # noqa: E402
from domi_desktop.platform.timezone import install_os_zone  # noqa: E402
from domi_desktop.secrets import MemorySecretStore  # noqa: E402
from domi_desktop.store import Store  # noqa: E402


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def tell(name: str, window: QWidget) -> None:
    QApplication.processEvents()
    screen = window.screen()
    print(json.dumps({"window": name, "frame": rect(window.frameGeometry()),
                      "room": rect(screen.availableGeometry()),
                      "scale": screen.devicePixelRatio()}), flush=True)  # fmt: skip


def main() -> None:
    from domi_desktop.ui.i18n import set_language
    from domi_desktop.ui.tray import TrayApp
    from tests.support.engine import running_engine

    install_os_zone()
    app = QApplication(sys.argv[:1])
    set_language(sys.argv[1] if len(sys.argv) > 1 else "en")
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as temp, Store.open(Path(temp), now=now) as store:
        store.create_schedule("Backup", "30 2 * * *", "local",
                              CommandAction(shell="restic backup ~/work"), now=now)  # fmt: skip
        store.create_schedule("Digest", "0 17 * * fri", "America/New_York",
                              HttpAction(url="https://hooks.example.com/digest"), now=now)  # fmt: skip
        with running_engine(store, secrets=MemorySecretStore({})) as engine:
            tray = TrayApp(app, engine.handle)
            tray.show_main_window()
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
