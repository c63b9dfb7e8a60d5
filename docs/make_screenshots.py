"""Render the README's screenshots: tray menu, the Schedules window, a notification in dunst,
editor (an error, and the preview), its Conditions box with a disk, history (and a run waiting
for a disk), timeline, settings. Run by ``make screenshots`` under Xvfb; writes PNGs next to
this file."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TZ", "Europe/Riga")

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QComboBox, QWidget

from domi_desktop.clock import SystemClock
from domi_desktop.frontdoor.service import Service
from domi_desktop.model import (
    CommandAction,
    FireClaim,
    HttpAction,
    Policies,
    RunStatus,
    SkipReason,
    Trigger,
)
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store

OUT = Path(__file__).resolve().parent
NOW = datetime(2026, 3, 4, 10, 2, tzinfo=UTC)


class FixedClock(SystemClock):
    def now(self) -> datetime:
        return NOW


def populate(store: Store) -> None:
    day = timedelta(days=1)
    report = store.create_schedule(
        "Rate-limit report",
        "0 9 * * 1-5",
        "Europe/Riga",
        CommandAction(
            argv=("report", "--endpoint", "/login"), secret_env=(("API_TOKEN", "login-api"),)
        ),
        notes="Rate limits for the login endpoint, for the Monday review. If it fails, "
        "ask Dana (platform team) before touching the quota.",
        now=NOW - 10 * day,
    )
    backup = store.create_schedule(
        "Nightly backup",
        "30 2 * * *",
        "local",
        CommandAction(shell="restic backup ~/work"),
        now=NOW - 10 * day,
    )
    store.create_schedule(
        "Weekly digest",
        "0 17 * * fri",
        "America/New_York",
        HttpAction(url="https://hooks.example.com/digest", method="POST"),
        Policies(),
        now=NOW,  # added today: its next run is ahead
    )
    store.create_schedule(
        "Invoice reminder",
        "0 10 1 * *",
        "Asia/Shanghai",
        CommandAction(argv=("remind", "invoices")),
        now=NOW,  # added today: its next run is ahead
    )
    for offset in range(7, -1, -1):  # up to this morning's 02:30
        due = (NOW - offset * day).replace(hour=0, minute=30)  # 02:30 in Riga
        run_id = store.claim_fire(
            FireClaim(
                backup.id,
                expected_last_due=store.get_schedule(backup.id).last_due,
                due=due,
                fired_at=due,
            )
        )
        assert run_id is not None
        store.start_run(run_id, due)
        status = RunStatus.failed if offset == 5 else RunStatus.succeeded
        store.finish_run(
            run_id,
            status=status,
            finished_at=due + timedelta(seconds=42),
            exit_code=1 if offset == 5 else 0,
            reason="exit code 1" if offset == 5 else None,
        )
    due = NOW.replace(hour=7, minute=0)
    skipped = [due - 2 * day, due - day]
    run_id = store.claim_fire(
        FireClaim(
            report.id,
            expected_last_due=store.get_schedule(report.id).last_due,
            due=due,
            fired_at=NOW,
            trigger=Trigger.catch_up,
            late=True,
            missed_count=2,
            skipped=skipped,
            skip_reason=SkipReason.missed,
        )
    )
    assert run_id is not None
    store.start_run(run_id, NOW)
    store.finish_run(
        run_id, status=RunStatus.succeeded, finished_at=NOW + timedelta(seconds=3), exit_code=0
    )


def save(widget: QWidget, name: str) -> None:
    widget.grab().save(str(OUT / name))
    print("wrote", OUT / name)


def tray_menu_shot(app: QApplication, store: Store) -> None:
    from domi_desktop.ui.tray import TrayApp
    from tests.support.engine import running_engine

    with running_engine(
        store, begin=False, secrets=MemorySecretStore({"login-api": "not-a-real-token"})
    ) as engine:
        engine.reload()
        _tray_menu(TrayApp(app, engine.handle), app)


def _tray_menu(tray: Any, app: QApplication) -> None:
    tray.rebuild_menu()
    menu = tray.menu
    menu.popup(QPoint(700, 40))
    app.processEvents()
    first = menu.actions()[0].menu()
    assert first is not None
    menu.setActiveAction(menu.actions()[0])
    first.popup(QPoint(700 + menu.width() - 4, 40))
    app.processEvents()
    canvas = QPixmap(menu.width() + first.width() + 40, max(menu.height(), first.height()) + 40)
    canvas.fill(QColor("#e5e7eb"))
    painter = QPainter(canvas)
    painter.drawPixmap(20, 20, menu.grab())
    painter.drawPixmap(20 + menu.width() - 4, 20, first.grab())
    painter.end()
    canvas.save(str(OUT / "tray-menu.png"))
    print("wrote", OUT / "tray-menu.png")
    first.hide()
    menu.hide()
    schedules_shot(tray)
    notification_shot(app, tray)
    tray.close()


def schedules_shot(tray: Any) -> None:
    window = tray.main_window
    window.refresh()
    window.resize(1180, 330)
    window.show()
    window.select(1)
    QApplication.processEvents()
    save(window, "schedules.png")
    window.hide()


def notification_shot(app: QApplication, tray: Any) -> None:
    """A real dunst on this session bus and screen, showing the app's own notification."""
    import time

    from jeepney.io.blocking import open_dbus_connection

    from domi_desktop.events import FireEvent
    from domi_desktop.ui.notices import late_notice
    from tests.desktop import realdesktop

    with tempfile.TemporaryDirectory() as temp, open_dbus_connection("SESSION") as conn:
        dunst = realdesktop.start_dunst(dict(os.environ), Path(temp), conn)
        try:
            due = NOW.replace(hour=7, minute=0)
            fire = FireEvent(schedule_id=1, run_id=1, name="Rate-limit report", tz="Europe/Riga",
                             due=due, fired_at=NOW, trigger=Trigger.catch_up, late=True,
                             missed_count=2)  # fmt: skip
            tray.notifier.notify(late_notice([fire], NOW))
            dunst.wait_for_count(1)
            time.sleep(0.5)  # drawn
            screen = app.primaryScreen()
            shot = screen.grabWindow(0)
            width = shot.width()
            shot.copy(width - 420, 0, 420, 160).save(str(OUT / "notification.png"))
            print("wrote", OUT / "notification.png")
        finally:
            dunst.process.stop()


def editor_shots(service: Service) -> None:
    from domi_desktop.ui.editor.dialog import EditorDialog

    dialog = EditorDialog(
        service,
        secret_names=lambda: ["login-api", "github-token"],
        schedule_id=1,
        now=lambda: NOW,
        confirm_discard=lambda _dialog: True,  # the shots edit it; closing must not ask
    )
    dialog.show()
    dialog.cron.set_text("0 9 * * mon-fri,8")
    QApplication.processEvents()
    save(dialog, "editor-error.png")
    dialog.cron.set_text("30 2 * * *")
    zone = dialog.findChild(QWidget, "zone")
    assert zone is not None and hasattr(zone, "set_zone")
    zone.set_zone("America/New_York")
    scenario = dialog.findChild(QComboBox, "simulateScenario")
    if scenario is not None:
        # By name: the last of the list was this once, until a scenario was added after it.
        scenario.setCurrentIndex(scenario.findData("on_battery"))
    QApplication.processEvents()
    save(dialog, "editor.png")
    dialog.close()


EDITOR_AT_2X = """
import sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import make_screenshots as shots
from PySide6.QtWidgets import QApplication
app = QApplication([])
app.setStyle("Fusion")
from domi_desktop.ui.button_icons import theme_icons_only
theme_icons_only(app)
from domi_desktop.frontdoor.service import Service
from domi_desktop.platform.timezone import install_os_zone
from domi_desktop.store import Store
from domi_desktop.ui.editor.dialog import EditorDialog
install_os_zone()
with tempfile.TemporaryDirectory() as temp, Store.open(Path(temp), now=shots.NOW) as store:
    shots.populate(store)
    dialog = EditorDialog(
        Service(store, shots.FixedClock()),
        secret_names=lambda: ["login-api"],
        schedule_id=1,
        now=lambda: shots.NOW,
    )
    dialog.show()
    app.processEvents()
    shots.save(dialog, "editor-2x.png")
"""


def editor_at_2x_shot() -> None:
    """The editor as it opens at 200 % on a 1600x1000 screen (800x500 logical): Save in view."""
    with tempfile.TemporaryDirectory() as temp:
        screens = Path(temp) / "screens.json"
        screen = {"name": "2x", "x": 0, "y": 0, "width": 1600, "height": 1000, "dpr": 1}
        screens.write_text(json.dumps({"screens": [{**screen, "logicalDpi": 96}]}))
        env = {
            **os.environ,
            "QT_QPA_PLATFORM": f"offscreen:configfile={screens}",
            "QT_SCALE_FACTOR": "2",
        }
        subprocess.run(
            [sys.executable, "-c", EDITOR_AT_2X, str(OUT)], check=True, env=env, cwd=ROOT
        )


WINDOWS_AS_THEY_OPEN = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import make_screenshots as shots
sys.exit(shots.windows_as_they_open(sys.argv[2], sys.argv[3]))
"""


def windows_as_they_open(suffix: str, language: str) -> int:
    """In a process of its own (its screen and scale are the environment's): the Schedules
    window, the editor, History, the Timeline and Settings as each opens, at the size the app
    gives it on this screen, saved as ``<window>-<suffix>.png``; the Timeline in Chinese and the
    editor at 2x are the main run's pictures, not made again here."""
    from domi_desktop.cron import set_local_resolver
    from domi_desktop.frontdoor.settings import AppSettings
    from domi_desktop.platform.autostart import autostart_for_platform
    from domi_desktop.platform.timezone import install_os_zone
    from domi_desktop.ui.button_icons import theme_icons_only
    from domi_desktop.ui.editor.dialog import EditorDialog
    from domi_desktop.ui.history.window import HistoryWindow
    from domi_desktop.ui.i18n import set_language
    from domi_desktop.ui.settings import SettingsDialog
    from domi_desktop.ui.timeline.window import TimelineWindow
    from domi_desktop.ui.tray import TrayApp
    from tests.support.engine import running_engine
    from tests.support.timeline_week import NOW as WEEK_NOW
    from tests.support.timeline_week import RIGA, START, build_week

    app = QApplication([])
    app.setStyle("Fusion")
    theme_icons_only(app)
    install_os_zone()
    set_language(language)
    names = {"schedules", "history", "settings"}
    names |= {"timeline"} if language == "en" else {"editor"}

    def shoot(widget: QWidget, name: str) -> None:
        widget.show()
        QApplication.processEvents()
        if name in names:
            save(widget, f"{name}-{suffix}.png")
        widget.close()

    with tempfile.TemporaryDirectory() as temp:
        data = Path(temp)
        with Store.open(data / "data", now=NOW) as store:
            populate(store)
            secrets = MemorySecretStore({"login-api": "not-a-real-token"})
            with running_engine(store, begin=False, secrets=secrets) as engine:
                engine.reload()
                tray = TrayApp(app, engine.handle)
                set_language(language)  # over the saved settings' language the tray applied
                tray.show_main_window()
                tray.main_window.select(1)
                shoot(tray.main_window, "schedules")
                tray.close()
            editor = EditorDialog(
                Service(store, FixedClock()),
                secret_names=lambda: ["login-api"],
                schedule_id=1,
                now=lambda: NOW,
                confirm_discard=lambda _dialog: True,
            )
            shoot(editor, "editor")
            shoot(HistoryWindow(store), "history")
        autostart = autostart_for_platform("linux", home=Path("/home/alex"), env={})
        settings = SettingsDialog(AppSettings(language=language), autostart=autostart)
        shoot(settings, "settings")
        set_local_resolver(lambda: RIGA)
        with Store.open(data / "week", now=WEEK_NOW, machine="laptop") as store:
            build_week(store)
            timeline = TimelineWindow(store, lambda _run: None, now=lambda: WEEK_NOW)
            timeline.show_period(START, 7)
            shoot(timeline, "timeline")
    return 0


def windows_as_they_open_shots() -> None:
    """The main windows at 200 % on a 1920x1080 screen (960x540 logical: each must fit), and in
    Chinese at 1x on the same screen: an X server of that size of their own, the real xcb
    platform, as tests/desktop/test_windows_fit.py opens them (the offscreen platform's fonts
    are not the desktop's)."""
    if not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        print("no Chinese font here (install fonts-wqy-microhei): the -zh pictures are kept")
        runs = [("2x", "en", "2")]
    else:
        runs = [("2x", "en", "2"), ("zh", "zh", "1")]
    read, write = os.pipe()
    command = ["Xvfb", "-displayfd", str(write), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"]
    server = subprocess.Popen(
        command, pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    os.close(write)
    try:
        with os.fdopen(read) as stream:
            display = f":{stream.readline().strip()}"
        for suffix, language, scale in runs:
            env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
                   "QT_SCALE_FACTOR": scale}  # fmt: skip
            env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no tray, no notifications: windows only
            shot = [sys.executable, "-c", WINDOWS_AS_THEY_OPEN, str(OUT), suffix, language]
            subprocess.run(shot, check=True, env=env, cwd=ROOT)
    finally:
        server.terminate()
        server.wait(10)


def history_shot(store: Store) -> None:
    from domi_desktop.ui.history.window import HistoryWindow

    window = HistoryWindow(store)
    window.resize(1100, 420)
    window.show()
    QApplication.processEvents()
    save(window, "history.png")
    window.close()


def conditions_disk_shot(service: Service) -> None:
    """The editor's Conditions box with a disk, a wait and a moment (the README's example)."""
    from PySide6.QtWidgets import QCheckBox, QLineEdit, QPlainTextEdit, QSpinBox

    from domi_desktop.ui.editor.dialog import EditorDialog

    dialog = EditorDialog(service, now=lambda: NOW, confirm_discard=lambda _dialog: True)

    def child(kind: type[Any], name: str) -> Any:
        found = dialog.findChild(kind, name)
        assert found is not None, name
        return found

    child(QPlainTextEdit, "cron").setPlainText("@daily")
    child(QLineEdit, "name").setText("Backup")
    child(QLineEdit, "command").setText("backup-to $DOMI_VOLUME_PATH")
    child(QLineEdit, "volume").setText("Backup")
    child(QSpinBox, "waitHours").setValue(72)
    child(QCheckBox, "atUnlock").setChecked(True)
    child(QSpinBox, "minInterval").setValue(60)
    dialog.resize(760, dialog.height())  # the box at a usual width, not stretched
    dialog.show()
    QApplication.processEvents()
    save(dialog.conditions, "editor-conditions-disk.png")
    dialog.close()


def history_waiting_disk_shot(data: Path) -> None:
    """History in the README's worked example: a backup waiting for its disk, and the two days
    it ran once the disk was plugged in (as tests/unit/ui/history/test_history_waiting_disk.py)."""
    from domi_desktop.model import Conditions
    from domi_desktop.ui.history.window import HistoryWindow

    now = datetime(2026, 3, 4, 9, 30, tzinfo=UTC)
    with Store.open(data, now=now - timedelta(days=3)) as store:
        policies = Policies(conditions=Conditions(volume="Backup", wait_at_most=timedelta(days=3)))
        action = CommandAction(shell='rsync -a ~/Documents/ "$DOMI_VOLUME_PATH/documents/"')
        backup = store.create_schedule(
            "Backup to the USB disk", "@daily", "UTC", action, policies,
            now=now - timedelta(days=3),
        )  # fmt: skip
        # Plugged in at 11:12 and 19:03 on this clock (Riga), as the README tells it.
        for days_ago, plugged_at in ((2, 9 * 60 + 12), (1, 17 * 60 + 3)):
            due = (now - timedelta(days=days_ago)).replace(hour=0, minute=0)
            run_id = store.claim_fire(
                FireClaim(backup.id, store.get_schedule(backup.id).last_due, due, due,
                          status=RunStatus.waiting, reason="waiting for the disk Backup")
            )  # fmt: skip
            assert run_id is not None
            started = due + timedelta(minutes=plugged_at)
            waited = f"{plugged_at // 60} hours {plugged_at % 60} minutes"
            store.start_waiting(run_id, started, store.log_path_for(run_id), late=True,
                                reason=f"started after waiting {waited} for the disk Backup")  # fmt: skip
            store.finish_run(run_id, status=RunStatus.succeeded,
                             finished_at=started + timedelta(minutes=4), exit_code=0)  # fmt: skip
        due = now.replace(hour=0, minute=0)
        store.claim_fire(
            FireClaim(backup.id, store.get_schedule(backup.id).last_due, due, due,
                      status=RunStatus.waiting, reason="waiting for the disk Backup")
        )  # fmt: skip
        window = HistoryWindow(store)
        window.resize(1200, 300)
        window.show()
        QApplication.processEvents()
        save(window, "history-waiting-disk.png")
        window.close()


def timeline_shot(data: Path) -> None:
    """The fixture week of the Timeline's tests (tests/support/timeline_week.py): two nights asleep, an
    afternoon without the app, the catch-ups after them, a wait for the charger, failures; at
    1280x720 in the dark palette (what the issue asks it to fit), in English on the catch-up
    and in Chinese on the wait (the line under the strip is the focused due's)."""
    from domi_desktop.cron import set_local_resolver
    from domi_desktop.ui.i18n import set_language
    from domi_desktop.ui.palette import dark_palette
    from domi_desktop.ui.timeline.window import TimelineWindow
    from tests.support.timeline_week import NOW as WEEK_NOW
    from tests.support.timeline_week import RIGA, START, build_week

    shots = [("en", "catch_up", "timeline.png"), ("zh", "waited", "timeline-zh.png")]
    if not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        # Boxes instead of characters would be a wrong picture; the one in git is kept.
        print("kept timeline-zh.png: no Chinese font here (install fonts-wqy-microhei)")
        shots.pop()
    set_local_resolver(lambda: RIGA)
    with Store.open(data, now=WEEK_NOW, machine="laptop") as store:
        week = build_week(store)
        for language, focus, name in shots:
            set_language(language)
            window = TimelineWindow(store, lambda _run: None, now=lambda: WEEK_NOW)
            window.setPalette(dark_palette())
            window.resize(1280, 720)
            window.show_period(START, 7)
            window.show()
            window.view.focus_run(week.runs[focus])
            QApplication.processEvents()
            save(window, name)
            window.close()
        set_language("en")


def window_shots(data: Path) -> None:
    """A schedule with hours ("Only between 22:00-06:00"): the editor's "What if the laptop
    sleeps?" asleep through the whole window, and a week of its nights on the Timeline, each a
    band, with the runs inside and a night slept through, skipped."""
    from datetime import time

    from PySide6.QtWidgets import QLineEdit

    from domi_desktop.cron import set_local_resolver
    from domi_desktop.model import Conditions, Window
    from domi_desktop.store import spans
    from domi_desktop.story import SpanSource
    from domi_desktop.ui.editor.dialog import EditorDialog
    from domi_desktop.ui.palette import dark_palette
    from domi_desktop.ui.timeline.window import TimelineWindow
    from tests.support.timeline_week import RIGA

    start = datetime(2026, 3, 2, tzinfo=RIGA)
    now = start + timedelta(days=6, hours=12)
    night = timedelta(hours=22)
    set_local_resolver(lambda: RIGA)
    with Store.open(data, now=start - timedelta(days=1), machine="laptop") as store:
        service = Service(store, FixedClock())
        dialog = EditorDialog(service, now=lambda: start, confirm_discard=lambda _dialog: True)
        for kind, name, text in (
            (QLineEdit, "name", "Nightly backup"),
            (QLineEdit, "window", "22:00-06:00"),
        ):
            found = dialog.findChild(kind, name)
            assert found is not None, name
            found.setText(text)
        dialog.cron.set_text("0 22 * * *")
        scenario = dialog.findChild(QComboBox, "simulateScenario")
        assert scenario is not None
        scenario.setCurrentIndex(scenario.findData("window_whole"))
        dialog.resize(900, dialog.height())
        dialog.show()
        QApplication.processEvents()
        save(dialog.sleep, "editor-sleep-window.png")
        dialog.close()

        policies = Policies(
            conditions=Conditions(window=Window(time(22), time(6)), on_ac_power=True)
        )
        action = CommandAction(shell="restic backup ~/Documents")
        backup = store.create_schedule(
            "Nightly backup", "0 22 * * *", "Europe/Riga", action, policies,
            now=start - timedelta(days=1),
        )  # fmt: skip
        asleep = [  # (night, fell asleep, woke) after the window's start
            (2, timedelta(minutes=-30), timedelta(hours=9, minutes=10)),
            (4, timedelta(minutes=-10), timedelta(hours=3, minutes=15)),
        ]
        writer = store.writer()
        try:
            machine = store.machine
            writer.transact(lambda c: spans.started(c, machine, start - timedelta(days=1)))
            for day, fell, woke in asleep:
                at, back = (
                    start + timedelta(days=day) + night + fell,
                    start + timedelta(days=day) + night + woke,
                )
                writer.transact(lambda c, at=at: spans.beat(c, machine, at))
                writer.transact(lambda c, at=at: spans.falling_asleep(c, machine, at))
                writer.transact(
                    lambda c, at=at, back=back: spans.woke(c, machine, back, at, SpanSource.signal)
                )
            writer.transact(lambda c: spans.beat(c, machine, now))
        finally:
            writer.close()
        last = store.get_schedule(backup.id).last_due
        starts = {
            0: timedelta(0),
            1: timedelta(hours=1, minutes=40),
            3: timedelta(0),
            4: timedelta(hours=3, minutes=15),
            5: timedelta(0),
        }
        for day in range(6):
            due = start + timedelta(days=day) + night
            delay = starts.get(day)
            reason = "waiting for the charger" if day == 1 else None
            run_id = store.claim_fire(
                FireClaim(backup.id, last, due, due, status=RunStatus.waiting, reason=reason)
            )
            assert run_id is not None
            last = due
            if delay is None:
                store.skip_waiting(
                    run_id, due + timedelta(hours=9, minutes=10), "asleep 22:00-06:00"
                )
                continue
            begun = due + delay
            said = "started after waiting 1 hour 40 minutes for the charger" if day == 1 else None
            store.start_waiting(
                run_id, begun, store.log_path_for(run_id), late=bool(delay), reason=said
            )
            store.finish_run(
                run_id,
                status=RunStatus.succeeded,
                finished_at=begun + timedelta(minutes=35),
                exit_code=0,
            )
        window = TimelineWindow(store, lambda _run: None, now=lambda: now)
        window.setPalette(dark_palette())
        window.resize(1280, 220)
        window.show_period(start, 7)
        window.show()
        QApplication.processEvents()
        save(window, "timeline-window.png")
        window.close()
    set_local_resolver(None)


def monitoring_box_shot(app: QApplication, data: Path) -> None:
    """The editor's Monitoring box on a running app whose check domi made on a local Healthchecks
    (the tests' stand-in server, on loopback): the check's state after a run, and a test ping's
    answer, each as the box gets it from the engine."""
    import time

    from PySide6.QtWidgets import QAbstractButton, QLabel

    from domi_desktop.model import Monitor
    from domi_desktop.ui.tray import TrayApp
    from tests.support.engine import running_engine
    from tests.unit.monitor.fake_healthchecks import FakeHealthchecks

    def until(done: Any, what: str) -> None:
        deadline = time.monotonic() + 60
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(what)
            app.processEvents()
            time.sleep(0.02)

    key = "hcw_a_made_up_project_key"
    with FakeHealthchecks(key) as hc, Store.open(data, now=datetime.now(UTC)) as store:
        monitor = Monitor(healthchecks_key="hc-key", healthchecks_api=hc.url)
        store.create_schedule("Nightly backup", "30 2 * * *", "local",
                              CommandAction(shell="true"), Policies(monitor=monitor),
                              now=datetime.now(UTC))  # fmt: skip
        with running_engine(store, secrets=MemorySecretStore({"hc-key": key})) as engine:
            tray = TrayApp(app, engine.handle)
            engine.handle.run_now(1)
            until(lambda: [p.kind for c in hc.checks.values() for p in c.pings]
                  == ["start", "success"], "the run's pings")  # fmt: skip
            tray.open_editor(1)
            dialog = tray._windows["editor"]
            dialog.resize(760, dialog.height())
            test = dialog.findChild(QAbstractButton, "testPing")
            checks = dialog.findChild(QLabel, "monitorChecks")
            until(
                lambda: "Last known state: up" in checks.text() and test.isEnabled(),
                "the check's state",
            )
            test.click()
            until(lambda: "answered" in dialog.findChild(QLabel, "testPingResult").text(),
                  "the test ping's answer")  # fmt: skip
            until(lambda: "test ping" in checks.text(), "the state after the test")
            save(dialog.monitoring, "editor-monitoring.png")
            dialog.close()
            tray.close()


def settings_shot() -> None:
    from domi_desktop.frontdoor.settings import AppSettings
    from domi_desktop.platform.autostart import autostart_for_platform
    from domi_desktop.ui.settings import SettingsDialog

    # A made-up home so the picture shows a typical path; nothing is written without a click.
    autostart = autostart_for_platform("linux", home=Path("/home/alex"), env={})
    dialog = SettingsDialog(AppSettings(), autostart=autostart)
    dialog.show()
    QApplication.processEvents()
    save(dialog, "settings.png")
    dialog.close()


def main() -> int:
    from domi_desktop.platform.timezone import install_os_zone

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        choices=["timeline", "window", "monitoring", "scaled"],
        help="render just this picture, or the windows at 2x and in Chinese (scaled); the rest"
        " take minutes",
    )
    args = parser.parse_args()
    install_os_zone()
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    from domi_desktop.ui.button_icons import theme_icons_only

    theme_icons_only(app)  # as the app: the theme's icons on buttons, or none
    app.setAttribute(Qt.ApplicationAttribute.AA_DontShowIconsInMenus, False)
    if args.only == "monitoring":
        with tempfile.TemporaryDirectory() as temp:
            monitoring_box_shot(app, Path(temp))
        return 0
    if args.only == "scaled":
        windows_as_they_open_shots()
        return 0
    if args.only == "timeline":
        with tempfile.TemporaryDirectory() as temp:
            timeline_shot(Path(temp) / "week")
        return 0
    if args.only == "window":
        with tempfile.TemporaryDirectory() as temp:
            window_shots(Path(temp) / "window")
        return 0
    with tempfile.TemporaryDirectory() as temp:
        data = Path(temp)
        with Store.open(data / "data", now=NOW) as store:
            populate(store)
            service = Service(store, FixedClock())
            tray_menu_shot(app, store)
            editor_shots(service)
            conditions_disk_shot(service)
            history_shot(store)
            settings_shot()
        history_waiting_disk_shot(data / "disk")
        monitoring_box_shot(app, data / "monitoring")
        timeline_shot(data / "week")
        window_shots(data / "window")
    editor_at_2x_shot()
    windows_as_they_open_shots()
    return 0


if __name__ == "__main__":
    sys.exit(main())
