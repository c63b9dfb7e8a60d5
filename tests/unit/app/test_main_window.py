"""The Schedules window, offscreen: its actions, sorting, search, live updates, export/import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from domi_desktop.app.gui import connect
from domi_desktop.errors import ParamError
from domi_desktop.events import Event, FireEvent, RunFinished, RunWaiting
from domi_desktop.model import CommandAction, Policies, RunStatus, Trigger, WakeReason
from domi_desktop.secrets import MemorySecretStore
from domi_desktop.store import Store
from domi_desktop.ui.main_window import MainWindow
from domi_desktop.ui.schedule_model import Column, person_moment
from domi_desktop.ui.tray import TrayApp
from tests.support.engine import RunningEngine, running_engine
from tests.support.fakes import wait_for

PASS = CommandAction(argv=(sys.executable, "-c", "pass"))
REPORT_NOTES = "For the <b>Monday</b> meeting.\n\tAsk Ana & Bo first."


@pytest.fixture
def tray(qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrayApp]:
    monkeypatch.setenv("TZ", "Europe/Riga")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    now = datetime.now(UTC)
    with Store.open(tmp_path / "data", now=now) as store:
        store.create_schedule("Backup", "0 2 * * *", "Europe/Riga", PASS, now=now)
        store.create_schedule(
            "Report", "0 9 * * 1-5", "America/New_York",
            CommandAction(argv=("echo", "hi"), secret_env=(("TOKEN", "api-token"),)),
            Policies(retries=2, timeout=None), notes=REPORT_NOTES, now=now,
        )  # fmt: skip
        store.create_schedule("Always fails", "*/5 * * * *", "UTC", PASS, now=now)
        with running_engine(store, secrets=MemorySecretStore()) as engine:
            app = TrayApp(qapp, engine.handle)
            connect(app, engine.handle)
            app.engine = engine  # type: ignore[attr-defined]
            engine.settle()
            app.main_window.refresh()
            yield app
            app.close()


def window(tray: TrayApp) -> MainWindow:
    return tray.main_window


def names(win: MainWindow) -> list[str]:
    proxy = win.proxy
    return [proxy.index(row, Column.title).data() for row in range(proxy.rowCount())]


def select(win: MainWindow, name: str) -> None:
    win.table.clearSelection()
    win.select(next(s.id for s in win.model.schedules() if s.name == name))


def answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    asked: list[str] = []

    def question(_parent: Any, _title: str, text: str, *_args: Any) -> Any:
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_it_lists_every_schedule_with_meaning_next_and_last_run(tray: TrayApp) -> None:
    win = window(tray)
    assert sorted(names(win)) == ["Always fails", "Backup", "Report"]
    row = names(win).index("Report")
    cell = lambda column: win.proxy.index(row, column).data()  # noqa: E731
    assert cell(Column.meaning) == "At 09:00, Monday through Friday"
    # Local time first (Riga), the schedule's own beside it.
    assert cell(Column.next_run).endswith(" (09:00 New York)")
    assert cell(Column.last_run) == "never"
    assert win.proxy.index(row, Column.enabled).data(Qt.ItemDataRole.CheckStateRole) == (
        Qt.CheckState.Checked
    )


def test_a_schedules_notes_are_the_tooltip_of_its_name_as_typed(tray: TrayApp) -> None:
    win = window(tray)
    tip = lambda name: win.proxy.index(names(win).index(name), Column.title).data(  # noqa: E731
        Qt.ItemDataRole.ToolTipRole
    )
    # Escaped, not markup: the <b> shows as typed; the line break and the tab are kept.
    assert tip("Report") == (
        "<p style='white-space:pre-wrap'>For the &lt;b&gt;Monday&lt;/b&gt; meeting.\n"
        "\tAsk Ana &amp; Bo first.</p>"
    )
    assert tip("Backup") is None
    backup = next(s.id for s in win.model.schedules() if s.name == "Backup")
    tray.host.service.update_schedule({"id": backup, "notes": "Keeps the NAS copy."})
    assert tip("Backup") == "<p style='white-space:pre-wrap'>Keeps the NAS copy.</p>"


def test_delete_asks_and_a_no_keeps_the_schedule(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = window(tray)
    asked = answer(monkeypatch, QMessageBox.StandardButton.No)
    select(win, "Backup")
    assert win.delete_selected() is False
    assert asked == ["Delete “Backup”? Its history is deleted too."]
    assert "Backup" in names(win)
    assert len(tray.host.store.list_schedules()) == 3

    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    win.acts["delete"].trigger()
    assert "Backup" not in names(win)
    assert [s.name for s in tray.host.store.list_schedules()] == ["Report", "Always fails"]


def test_delete_is_the_delete_key(tray: TrayApp, monkeypatch: pytest.MonkeyPatch) -> None:
    win = window(tray)
    assert win.acts["delete"].shortcut().matches(Qt.Key.Key_Delete).name == "ExactMatch"
    assert win.acts["duplicate"].shortcut().toString() == "Ctrl+D"
    assert win.acts["new"].shortcut().toString() == "Ctrl+N"
    assert {s.toString() for s in win.acts["edit"].shortcuts()} == {"Return", "Enter"}


# The offscreen platform cannot raise a window or pass on size hints: not the app's to fix.
@pytest.mark.qt_log_ignore("This plugin does not support")
def test_duplicate_makes_a_paused_copy_and_opens_the_editor_on_it(tray: TrayApp) -> None:
    win = window(tray)
    select(win, "Report")
    (copy_id,) = win.duplicate_selected()
    original = next(s for s in tray.host.store.list_schedules() if s.name == "Report")
    copy = tray.host.store.get_schedule(copy_id)
    assert copy.name == "Report (copy)"
    assert (copy.expr, copy.tz, copy.action, copy.policies, copy.notes) == (
        original.expr, original.tz, original.action, original.policies, REPORT_NOTES,
    )  # fmt: skip
    assert original.enabled and not copy.enabled  # the two never both run unawares
    assert "Report (copy)" in names(win)
    assert [s.name for s in win.selected()] == ["Report (copy)"]
    editor = tray._windows["editor"]
    assert editor.isVisible() and editor.windowTitle() == "Edit “Report (copy)”"
    editor.close()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)


def test_duplicate_then_cancel_leaves_no_copy_and_a_save_keeps_it(tray: TrayApp) -> None:
    win = window(tray)
    select(win, "Report")
    (copy_id,) = win.duplicate_selected()
    editor = tray._windows["editor"]
    editor.reject()  # Cancel, nothing edited
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    assert "Report (copy)" not in names(win)
    assert all(s.id != copy_id for s in tray.host.store.list_schedules())

    select(win, "Report")
    (kept_id,) = win.duplicate_selected()
    editor = tray._windows["editor"]
    editor.name.setText("Report, second")
    editor.save_button.click()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    assert tray.host.store.get_schedule(kept_id).name == "Report, second"
    assert "Report, second" in names(win)


@pytest.mark.linux_only  # /proc; tests/actions/test_jobs_windows.py stops a Windows job's tree
def test_stop_ends_the_whole_process_tree(tray: TrayApp, tmp_path: Path, qtbot: Any) -> None:
    pids = tmp_path / "pids"
    script = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(60)\n"
    )
    long = tray.host.service.create_schedule(
        {"name": "Long job", "expr": "0 3 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": [sys.executable, "-c", script]}}
    )  # fmt: skip
    win = window(tray)
    select(win, "Long job")
    assert not win.acts["stop"].isEnabled()
    win.run_selected()
    qtbot.waitUntil(lambda: tray.host.engine.state.running_runs() != [], timeout=10_000)
    (run_id,) = tray.host.engine.state.running_runs()
    assert win.acts["stop"].isEnabled()
    row = names(win).index("Long job")
    assert win.proxy.index(row, Column.result).data() == "running…"
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, 10, "both pids")
    parent, child = (int(pid) for pid in pids.read_text().split())
    assert win.stop_selected() == [run_id]
    qtbot.waitUntil(lambda: tray.host.engine.state.running_runs() == [], timeout=10_000)
    # The lane is free at once; the result reaches the database with the worker's next batch.
    qtbot.waitUntil(
        lambda: tray.host.store.get_run(run_id).status is RunStatus.interrupted, timeout=10_000
    )
    assert tray.host.store.get_run(run_id).reason == "stopped by the user"
    for pid in (parent, child):
        wait_for(lambda pid=pid: not alive(pid), 10, f"process {pid} to end")
    # The window learns of the end from the run's event, which may come after the row is written.
    qtbot.waitUntil(
        lambda: (
            win.proxy.index(names(win).index("Long job"), Column.result).data() == "interrupted"
        ),
        timeout=30_000,
    )
    assert long["id"] in {s.id for s in win.model.schedules()}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by its parent) counts as ended.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_columns_sort_and_the_search_box_filters(tray: TrayApp) -> None:
    win = window(tray)
    win.table.sortByColumn(Column.title, Qt.SortOrder.AscendingOrder)
    assert names(win) == ["Always fails", "Backup", "Report"]
    win.table.sortByColumn(Column.title, Qt.SortOrder.DescendingOrder)
    assert names(win) == ["Report", "Backup", "Always fails"]
    win.table.sortByColumn(Column.next_run, Qt.SortOrder.AscendingOrder)
    # Soonest first ("Always fails", every five minutes, ties with "Report" at 14:00 UTC).
    by_name = {s.name: s.id for s in tray.host.store.list_schedules()}
    fires = [tray.host.engine.state.next_fire(by_name[name]) for name in names(win)]
    assert None not in fires and fires == sorted(fires)
    assert fires[0] == tray.host.engine.state.next_fire(by_name["Always fails"])

    win.search.setText("monday")  # the meaning is searched too
    assert names(win) == ["Report"]
    win.search.setText("BACK")
    assert names(win) == ["Backup"]
    win.search.setText("")
    assert len(names(win)) == 3


def test_the_enabled_switch_pauses_and_resumes(tray: TrayApp) -> None:
    win = window(tray)
    row = names(win).index("Backup")
    index = win.proxy.index(row, Column.enabled)
    assert win.proxy.setData(index, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    backup = next(s for s in tray.host.store.list_schedules() if s.name == "Backup")
    assert not backup.enabled
    row = names(win).index("Backup")
    assert win.proxy.index(row, Column.next_run).data() == "paused"
    select(win, "Backup")
    assert win.acts["toggle"].text() == "Resume"
    win.acts["toggle"].trigger()
    assert tray.host.store.get_schedule(backup.id).enabled


def test_changes_through_the_service_show_at_once(tray: TrayApp) -> None:
    win = window(tray)
    created = tray.host.service.create_schedule(
        {"name": "From the CLI", "expr": "0 4 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": ["true"]}}
    )  # fmt: skip
    assert "From the CLI" in names(win)
    tray.host.service.update_schedule({"id": created["id"], "name": "Renamed"})
    assert "Renamed" in names(win) and "From the CLI" not in names(win)
    tray.host.service.delete_schedule({"id": created["id"]})
    assert "Renamed" not in names(win)


def test_export_then_import_round_trips_without_secret_values(
    tray: TrayApp, tmp_path: Path
) -> None:
    win = window(tray)
    path = tmp_path / "schedules.json"
    assert win.files.export_to(path) == 3
    text = path.read_text(encoding="utf-8")
    assert "api-token" in text  # the secret by name, and no value anywhere
    before = {
        (s.name, s.expr, s.tz, s.action, s.policies, s.notes)
        for s in tray.host.store.list_schedules()
    }
    for schedule in tray.host.store.list_schedules():
        tray.host.service.delete_schedule({"id": schedule.id})
    assert names(win) == []
    created = win.files.import_from(path)
    assert len(created) == 3
    after = {
        (s.name, s.expr, s.tz, s.action, s.policies, s.notes)
        for s in tray.host.store.list_schedules()
    }
    assert after == before
    assert sorted(names(win)) == ["Always fails", "Backup", "Report"]
    json.loads(text)  # a JSON document


def test_a_broken_import_changes_nothing(tray: TrayApp, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"format": "nope"}', encoding="utf-8")
    with pytest.raises(ParamError, match="not a domi-desktop export"):
        window(tray).files.import_from(path)
    assert len(tray.host.store.list_schedules()) == 3


def test_quitting_with_a_job_running_asks_first(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch, qapp: QApplication, qtbot: Any
) -> None:
    quits: list[bool] = []
    monkeypatch.setattr(qapp, "quit", lambda: quits.append(True))
    assert tray.quit() is True and quits == [True]  # nothing runs: no question

    long = tray.host.service.create_schedule(
        {"name": "Sleeper", "expr": "0 3 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": [sys.executable, "-c", "import time; time.sleep(30)"]}}
    )  # fmt: skip
    started(tray, long["id"], qtbot)
    asked: list[str] = []

    def exec_(box: QMessageBox) -> int:
        asked.append(box.text())
        return QMessageBox.StandardButton.Cancel.value

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    assert tray.quit() is False
    assert asked == ["1 job is running"] and quits == [True]


def test_without_a_tray_closing_the_window_quits(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch, qapp: QApplication
) -> None:
    quits: list[bool] = []
    monkeypatch.setattr(qapp, "quit", lambda: quits.append(True))
    tray.show()  # offscreen: no tray, so the window is the app
    assert window(tray).isVisible()
    window(tray).close()
    assert quits == [True]


def test_the_runtime_changes_state_before_it_tells(tray: TrayApp, qtbot: Any) -> None:
    seen: list[tuple[str, list[int]]] = []

    engine: RunningEngine = tray.engine  # type: ignore[attr-defined]

    def listener(event: Event) -> None:
        kind = "fire" if isinstance(event, FireEvent) else "finished"
        seen.append((kind, engine.host.runtime.running_runs()))  # on the engine's thread

    engine.call(lambda host: host.runtime.subscribe(listener))
    schedule = tray.host.store.list_schedules()[0]
    run_id = started(tray, schedule.id, qtbot, shown=False)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=10_000)
    assert seen == [("fire", [run_id]), ("finished", [])]


def test_the_icon_says_paused_and_the_tooltip_no_past_time(tray: TrayApp) -> None:
    tray.update_look()
    assert tray.state == "idle" and "Next:" in tray.tray.toolTip()
    tray.set_paused(True)
    assert tray.state == "paused"
    assert "All schedules paused" in tray.tray.toolTip() and "Next:" not in tray.tray.toolTip()
    assert tray.tray.icon().cacheKey() == tray.icons["paused"].cacheKey()
    tray.set_paused(False)
    assert tray.state == "idle" and tray.tray.icon().cacheKey() == tray.icons["idle"].cacheKey()


def test_a_running_schedule_is_marked_in_the_menu(tray: TrayApp, qtbot: Any) -> None:
    sleeper = tray.host.service.create_schedule(
        {"name": "Sleeper", "expr": "0 3 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": [sys.executable, "-c", "import time; time.sleep(30)"]}}
    )  # fmt: skip
    run_id = started(tray, sleeper["id"], qtbot)
    tray.rebuild_menu()
    entry = next(a for a in tray.menu.actions() if "Sleeper" in a.text())
    assert entry.text() == "▶ Sleeper · running"
    sub = entry.menu()
    assert sub is not None and "Stop" in [a.text() for a in sub.actions()]
    next(a for a in sub.actions() if a.text() == "Stop").trigger()
    qtbot.waitUntil(lambda: tray.host.engine.state.running_runs() == [], timeout=10_000)
    # The lane is free at once; the result reaches the database with the worker's next batch.
    qtbot.waitUntil(
        lambda: tray.host.store.get_run(run_id).status is RunStatus.interrupted, timeout=10_000
    )


def test_a_failure_notice_carries_its_run_and_a_readable_title(tray: TrayApp) -> None:
    sent = []
    tray.notifier.notify = sent.append  # type: ignore[method-assign]
    tray.on_event(
        RunFinished(run_id=7, schedule_id=3, name="Always fails", status=RunStatus.failed,
                    reason="exit code 1", exit_code=1, duration=None)  # type: ignore[arg-type]
    )  # fmt: skip
    (notice,) = sent
    assert (notice.title, notice.body, notice.warning, notice.run_id) == (
        "Run failed: Always fails", "exit code 1", True, 7,
    )  # fmt: skip


def test_times_for_people_are_local_with_the_schedule_clock_beside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moment = datetime(2024, 6, 4, 13, 0, tzinfo=UTC)  # 16:00 in Riga, 09:00 in New York
    monkeypatch.setenv("TZ", "Europe/Riga")
    assert person_moment(moment, "America/New_York") == "Tue 06-04 16:00 (09:00 New York)"
    assert person_moment(moment, "Europe/Riga") == "Tue 06-04 16:00"


def test_a_schedule_added_through_the_cli_shows_without_a_refresh(
    tray: TrayApp, qtbot: Any
) -> None:
    import subprocess

    host = tray.host
    env = {**os.environ, "DOMI_DATA_DIR": str(host.store.data_dir)}
    cli = subprocess.Popen(
        [sys.executable, "-m", "domi_desktop", "schedule", "add", "Via the CLI",
         "--cron", "0 5 * * *", "--", "true"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    with cli:
        qtbot.waitUntil(lambda: cli.poll() is not None, timeout=60_000)
        _out, errors = cli.communicate()
    assert cli.returncode == 0, errors
    # The window has no refresh timer: only the change the socket reported can show it (a
    # generous deadline for loaded machines; ``bench/window_bench.py`` has the row figures).
    qtbot.waitUntil(lambda: "Via the CLI" in names(window(tray)), timeout=30_000)


# The offscreen platform cannot raise a window or pass on size hints: not the app's to fix.
@pytest.mark.qt_log_ignore("This plugin does not support")
def test_quitting_after_an_editor_was_opened_and_closed_is_clean(
    tray: TrayApp, qapp: QApplication
) -> None:
    tray.open_editor(None)
    editor = tray._windows["editor"]
    editor.close()  # deleted on close: Qt owns its end
    QApplication.sendPostedEvents(None, 0)  # the DeferredDelete
    tray.open_settings()
    tray._windows["settings"].close()
    QApplication.sendPostedEvents(None, 0)
    tray.close()  # what run_tray does on the way out: no "already deleted"


def started(tray: TrayApp, schedule_id: int, qtbot: Any, *, shown: bool = True) -> int:
    """A manual run's id, once the recorder has it on record and its job started (``shown``:
    and the windows' picture of the engine has it running)."""
    answers: list[int | Exception] = []
    tray.host.engine.run_now(schedule_id, answers.append)
    qtbot.waitUntil(lambda: answers != [], timeout=10_000)
    (outcome,) = answers
    assert isinstance(outcome, int), outcome
    if shown:  # the windows see it once the engine's next picture has come
        qtbot.waitUntil(lambda: outcome in tray.host.engine.state.running_runs(), timeout=10_000)
    return outcome


def selected_names(win: MainWindow) -> list[str]:
    return [schedule.name for schedule in win.selected()]


def test_the_list_stays_sorted_and_the_selection_stays_on_its_schedule(
    tray: TrayApp, qtbot: Any
) -> None:
    win = window(tray)
    win.show()
    win.table.sortByColumn(Column.title, Qt.SortOrder.AscendingOrder)
    assert names(win) == ["Always fails", "Backup", "Report"]
    select(win, "Backup")
    backup = win.selected()[0].id
    tray.host.service.update_schedule({"id": backup, "name": "Zebra backup"})
    # Re-sorted once the change is shown; the selection went with its schedule.
    qtbot.waitUntil(lambda: names(win) == ["Always fails", "Report", "Zebra backup"])
    assert selected_names(win) == ["Zebra backup"]
    tray.host.service.create_schedule(
        {"name": "Aardvark", "expr": "0 4 * * *", "tz": "UTC",
         "action": {"type": "command", "argv": ["true"]}}
    )  # fmt: skip
    qtbot.waitUntil(lambda: names(win)[0] == "Aardvark")
    assert selected_names(win) == ["Zebra backup"]
    win.refresh()  # another process changed the schedules: every row is read again
    assert selected_names(win) == ["Zebra backup"]
    assert names(win) == ["Aardvark", "Always fails", "Report", "Zebra backup"]


def test_rows_do_not_move_under_the_pointer_until_it_leaves(tray: TrayApp, qtbot: Any) -> None:
    win = window(tray)
    win.table.sortByColumn(Column.title, Qt.SortOrder.AscendingOrder)
    win.show()
    qtbot.waitExposed(win)
    viewport = win.table.viewport()
    QApplication.sendEvent(viewport, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    backup = next(s.id for s in win.model.schedules() if s.name == "Backup")
    tray.host.service.update_schedule({"id": backup, "name": "Zebra backup"})
    QApplication.processEvents()
    assert names(win) == ["Always fails", "Zebra backup", "Report"]  # renamed in place
    QApplication.sendEvent(viewport, QEvent(QEvent.Type.Leave))
    qtbot.waitUntil(lambda: names(win) == ["Always fails", "Report", "Zebra backup"])


WRITER = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from domi_desktop.model import CommandAction
from domi_desktop.store import Store
with Store.open(Path(sys.argv[1]), now=datetime.now(UTC)) as store:
    store.create_schedule(sys.argv[2], "0 5 * * *", "UTC", CommandAction(argv=("true",)),
                          now=datetime.now(UTC))
"""


def write_elsewhere(data_dir: Path, name: str) -> None:
    """A schedule written to the database file by another process."""
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(data_dir), name],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_schedule_another_process_wrote_to_the_file_shows_after_one_wake(
    tray: TrayApp, qtbot: Any
) -> None:
    engine: RunningEngine = tray.engine  # type: ignore[attr-defined]
    window(tray)  # open: the Schedules window must follow the file
    write_elsewhere(tray.host.store.data_dir, "Written elsewhere")
    assert "Written elsewhere" not in names(window(tray))
    engine.call(lambda host: host.runtime.driver.wake(WakeReason.timer))  # any next wake
    qtbot.waitUntil(lambda: "Written elsewhere" in names(window(tray)), timeout=30_000)


@pytest.fixture
def empty(qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrayApp]:
    """The app on its first start: no schedules at all."""
    monkeypatch.setenv("TZ", "Europe/Riga")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    with (
        Store.open(tmp_path / "data", now=datetime.now(UTC)) as store,
        running_engine(store, secrets=MemorySecretStore()) as engine,
    ):
        app = TrayApp(qapp, engine.handle)
        connect(app, engine.handle)
        app.main_window.refresh()
        yield app
        app.close()


def test_a_first_start_says_how_to_make_the_first_schedule(empty: TrayApp, tmp_path: Path) -> None:
    win = window(empty)
    assert win.empty.isVisibleTo(win)
    assert "No schedules yet: " in win.empty.text()
    assert "New…" in win.empty.text() and "Import a crontab…" in win.empty.text()
    crontab = tmp_path / "crontab"
    crontab.write_text("0 3 * * * /usr/local/bin/backup.sh\n", encoding="utf-8")
    created, problems = win.files.import_crontab_from(crontab)
    assert len(created) == 1 and problems == []
    assert not win.empty.isVisibleTo(win)
    assert len(names(win)) == 1


def test_a_crontab_is_imported_with_its_bad_lines_named(tray: TrayApp, tmp_path: Path) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_text("0 3 * * * backup\n61 * * * * broken\n*/5 * * * * poll\n", encoding="utf-8")
    win = window(tray)
    created, problems = win.files.import_crontab_from(crontab)
    assert len(created) == 2
    assert len(problems) == 1 and problems[0].startswith("2: ")
    assert len(names(win)) == 5


def test_one_imported_or_exported_schedule_is_singular(tray: TrayApp, tmp_path: Path) -> None:
    from domi_desktop.ui.transfers import imported_text

    assert imported_text(1) == "Imported 1 schedule."
    assert imported_text(2) == "Imported 2 schedules."


def test_open_data_folder_says_where_it_is_when_no_file_manager_answers(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch, qapp: QApplication
) -> None:
    from PySide6.QtGui import QDesktopServices

    monkeypatch.setattr(QDesktopServices, "openUrl", lambda _url: False)
    monkeypatch.setattr("shutil.which", lambda _name: None)  # no xdg-open either
    win = window(tray)
    assert win.files.open_data_folder() is False
    box = win.findChild(QMessageBox, "dataFolder")
    assert box is not None and str(tray.host.store.data_dir) in box.text()
    assert qapp.clipboard().text() == str(tray.host.store.data_dir)
    assert str(tray.host.store.data_dir) in win.statusBar().currentMessage()
    box.close()


def test_the_list_shows_a_waiting_run_and_a_started_run_at_once(tray: TrayApp) -> None:
    win = window(tray)
    backup = next(s for s in win.model.schedules() if s.name == "Backup")
    row = lambda: names(win).index("Backup")  # noqa: E731
    cell = lambda column: win.proxy.index(row(), column).data()  # noqa: E731
    win.on_event(RunWaiting(99, backup.id, "Backup", None, "waiting for the charger"))
    assert cell(Column.result) == "waiting for the charger"
    assert cell(Column.last_run) == "never"
    run_id = tray.host.store.record_manual_run(backup.id, datetime.now(UTC))
    started = tray.host.store.get_run(run_id)
    win.on_event(FireEvent(backup.id, run_id, "Backup", backup.tz, None,
                           started.fired_at, Trigger.manual))  # fmt: skip
    assert cell(Column.result) == "running…"
    assert cell(Column.last_run) != "never"  # its start, before it ends


def test_without_a_tray_the_window_says_closing_it_stops_the_scheduler(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch, qapp: QApplication
) -> None:
    monkeypatch.setattr(qapp, "quit", lambda: None)
    tray.show()  # offscreen: no tray
    win = window(tray)
    assert win.no_tray.isVisible()
    assert "closing this window stops the scheduler" in win.no_tray.text()


def test_a_schedule_another_process_writes_shows_while_the_app_runs(
    tray: TrayApp, qtbot: Any
) -> None:
    engine: RunningEngine = tray.engine  # type: ignore[attr-defined]
    window(tray)
    reasons: list[str] = []
    tray.host.woke.connect(lambda _plan, reason: reasons.append(str(reason)))
    wait_for(
        lambda: engine.call(lambda host: host.runtime.driver.last_wake is not None),
        30,
        "the start-up wake",
    )
    write_elsewhere(tray.host.store.data_dir, "Written meanwhile")
    # No wake of any kind is asked for: the file seen changing is enough.
    qtbot.waitUntil(lambda: "Written meanwhile" in names(window(tray)), timeout=30_000)
    assert WakeReason.edit in reasons  # brought by the file's change, not by a timer
    newest = max(s.id for s in window(tray).model.schedules())
    qtbot.waitUntil(lambda: tray.host.engine.state.next_fire(newest) is not None)


@pytest.mark.linux_only
@pytest.mark.parametrize("status", [0, 3, 4])
def test_open_data_folder_hears_whether_xdg_open_opened_it(
    tray: TrayApp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, qtbot: Any, status: int
) -> None:
    """xdg-open exits 3 when no program takes a folder, 4 when the one it found failed: Qt's
    openUrl calls both opened."""
    tools = tmp_path / "bin"
    tools.mkdir()
    asked = tmp_path / "asked"
    fake = tools / "xdg-open"
    fake.write_text(f'#!/bin/sh\necho "$1" > {asked}\nexit {status}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    win = window(tray)
    assert win.files.open_data_folder() is True  # asked; the answer comes later
    qtbot.waitUntil(asked.exists, timeout=30_000)
    assert asked.read_text().strip() == str(tray.host.store.data_dir)
    if status == 0:
        qtbot.wait(300)  # a box would have come with the exit
        assert win.findChild(QMessageBox, "dataFolder") is None
    else:
        qtbot.waitUntil(
            lambda: win.findChild(QMessageBox, "dataFolder") is not None, timeout=30_000
        )
        box = win.findChild(QMessageBox, "dataFolder")
        assert str(tray.host.store.data_dir) in box.text()
        box.close()
