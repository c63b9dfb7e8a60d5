"""``domi-desktop`` with no command: the host's scheduler behind a tray icon and its windows."""

from __future__ import annotations

import linecache
import logging
import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from domi_desktop.app.primary import AlreadyRunning, PrimaryLock, wait_for_primary
from domi_desktop.errors import StoreError
from domi_desktop.paths import resolve_data_dir
from domi_desktop.ui.button_icons import theme_icons_only
from domi_desktop.ui.icons import load_icon

TYPE_CHECKING = False  # typing.TYPE_CHECKING would load typing before the windows need it
if TYPE_CHECKING:
    from domi_desktop.app.engine import EngineHandle
    from domi_desktop.ui.tray import TrayApp

log = logging.getLogger("domi_desktop")


def connect(tray_app: TrayApp, engine: EngineHandle) -> None:
    """The engine's signals into the tray app: events, wakes, "show" from a second launch, quit."""
    engine.events.connect(tray_app.on_events)
    engine.changed.connect(tray_app.engine_changed)
    engine.schedules_changed.connect(tray_app.schedule_changed)
    engine.store_changed.connect(tray_app.store_changed)
    engine.woke.connect(tray_app.on_wake)
    engine.show_requested.connect(tray_app.show_main_window)
    engine.quit_requested.connect(tray_app.app.quit)


def _has_display() -> bool:
    if sys.platform != "linux":
        return True
    return bool(
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("QT_QPA_PLATFORM")
    )


def run_tray(data_dir: str | Path | None) -> int:
    """The tray app on the store in ``data_dir`` (``None``: the default); headless without a display."""
    if not _has_display():
        print(
            "domi-desktop: no display (DISPLAY/WAYLAND_DISPLAY unset); running headless",
            file=sys.stderr,
        )
        from domi_desktop.app.headless import run_headless

        return run_headless(data_dir)
    try:
        return _run_tray(data_dir)
    except StoreError as error:
        # Started from a menu or at login, the app has no terminal to say why it stops.
        _notify_refusal(error)
        raise


def _run_tray(data_dir: str | Path | None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("domi-desktop")
    app.setQuitOnLastWindowClosed(False)
    theme_icons_only(app)  # before the palette: a new style brings its own
    lock = PrimaryLock(resolve_data_dir(data_dir))
    try:
        lock.take()
    except AlreadyRunning:
        return _show_primary(lock.data_dir)
    early = _early_icon()
    from domi_desktop.app.engine import EngineHandle, EngineThread
    from domi_desktop.app.logs import setup_logging
    from domi_desktop.app.qtloop import SignalBridge
    from domi_desktop.clock import SystemClock
    from domi_desktop.store import Store
    from domi_desktop.ui.palette import follow_system
    from domi_desktop.ui.tray import TrayApp

    with Store.open(data_dir, now=SystemClock().now()) as store:
        setup_logging(store.data_dir)
        follow_system(app)
        engine = EngineThread(store, gui=True, lock=lock)
        host = engine.start_engine()
        app.setWindowIcon(load_icon("idle"))
        handle = EngineHandle(host)
        tray_app = TrayApp(app, handle, early)
        connect(tray_app, handle)
        signals = SignalBridge()
        signals.received.connect(lambda _number: app.quit())
        # PySide6's import hook reads the source of every module imported after it (looking for
        # ``from __feature__``), and linecache keeps the lines: 8 MB at rest. Dropped before the
        # schedules are read, their objects take the freed space; a traceback reads them again.
        linecache.clearcache()
        engine.begin()
        tray_app.show()
        try:
            app.exec()
        finally:
            tray_app.close()  # no more windows, menus or notifications
            engine.stop_engine()
            handle.close()
            signals.close()
    return 0


def _early_icon() -> QSystemTrayIcon | None:
    """The tray icon, shown by the primary before the engine and the windows are loaded (a
    person who starts the app sees it at once), for the tray app to take over; None when the
    desktop has no tray."""
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    icon = QSystemTrayIcon(load_icon("idle"))
    icon.setToolTip("domi-desktop")
    icon.show()
    return icon


def _notify_refusal(error: StoreError) -> None:
    """A desktop notification of why the app cannot use its database (it then exits)."""
    from domi_desktop.platform.notify import Notice, notifier_for

    app = QApplication.instance() or QApplication(sys.argv[:1])
    tray = QSystemTrayIcon(load_icon("idle"), app)
    if sys.platform != "linux":
        tray.show()  # Qt shows a message only from an icon that is shown
    notifier = notifier_for(tray, "")
    notifier.notify(Notice("domi-desktop cannot use its database", str(error), warning=True))
    notifier.close()  # the notification is sent before the app exits


def _show_primary(data_dir: Path) -> int:
    client = wait_for_primary(data_dir)
    if client is None:
        print("domi-desktop: another instance holds the lock but does not answer", file=sys.stderr)
        return 1
    try:
        client.call("app.show", {})
    finally:
        client.close()
    log.info("domi-desktop already runs; asked it to show its window")
    return 0
