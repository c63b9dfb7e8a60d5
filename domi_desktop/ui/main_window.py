"""The Schedules window: where people manage their jobs, and the app's face without a tray.

Every action is a button, a menu entry, a context-menu entry and (where usual) a shortcut:
New (Ctrl+N), Edit (Enter), Duplicate (Ctrl+D), Delete (Del, asks first), Run now, Stop, Pause or
Resume, History. Rows update one at a time from the app's events and the service's changes.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    QSize,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QTableView,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.errors import DomiError, NotFoundError, StoreError
from domi_desktop.events import FireEvent, RunFinished, RunWaiting
from domi_desktop.model import Schedule
from domi_desktop.ui.backend import AppBackend, WindowActions
from domi_desktop.ui.column_fit import ColumnFit
from domi_desktop.ui.empty_state import EmptyState
from domi_desktop.ui.i18n import tr
from domi_desktop.ui.icons import load_icon
from domi_desktop.ui.kept_order import KeptOrder
from domi_desktop.ui.main_words import ACTION_TEXTS, NO_TRAY
from domi_desktop.ui.schedule_model import ID_ROLE, Column, ScheduleFilter, ScheduleModel
from domi_desktop.ui.screen_fit import fit_to_screen
from domi_desktop.ui.transfers import Transfers

log = logging.getLogger("domi_desktop")

COPY_SUFFIX = " (copy)"
COLUMN_WIDTHS = {Column.title: 200, Column.meaning: 240, Column.next_run: 230,
                 Column.last_run: 170, Column.result: 90, Column.enabled: 70}  # fmt: skip
"""Fixed widths, widened to the header's words: resizing to contents reads every row (10,000)."""


class MainWindow(QMainWindow):
    """The schedules, their next and last runs, and every action on them."""

    def __init__(self, host: AppBackend, actions: WindowActions) -> None:
        super().__init__()
        self._host = host
        self._app = actions
        self.setWindowTitle(tr("domi-desktop"))
        self.setWindowIcon(load_icon("idle"))
        fit_to_screen(self, QSize(980, 480))
        self.model = ScheduleModel(host.store, self._next_fire, self._set_enabled, self)
        self.proxy = ScheduleFilter(self.model, self)
        self.table = self._make_table()
        self.search = QLineEdit(self)
        self.search.setObjectName("search")
        self.search.setPlaceholderText(tr("Search schedules"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._search)
        self.files = Transfers(
            self, host.service, host.store.data_dir, self.selected, self.schedule_changed,
            self.statusBar().showMessage,
        )  # fmt: skip
        self.acts = self._make_actions()
        self._make_menus_and_toolbar()
        central = QWidget(self)
        layout = QVBoxLayout(central)
        self.no_tray = QLabel(tr(NO_TRAY), central)
        self.no_tray.setObjectName("noTray")
        self.no_tray.setWordWrap(True)
        self.no_tray.hide()
        layout.addWidget(self.no_tray)
        layout.addWidget(self.table)
        self.setCentralWidget(central)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        # A catch-up brings an event per schedule: the running set and the actions are brought up
        # to date once per turn of the event loop, not once per event.
        self._events_timer = QTimer(self)
        self._events_timer.setSingleShot(True)
        self._last_runs: dict[int, int] = {}
        """Schedule id -> its latest run that ended (or was skipped), not read yet."""
        self._events_timer.timeout.connect(self._after_events)
        self._order = KeptOrder(self.model, self.proxy, self.table, self.isVisible)
        # The window watches its rows for the pointer (a filter object of the order's own, on
        # the viewport, crashed the app as Qt tore the widgets down at quit).
        self.table.viewport().installEventFilter(self)
        self.empty = EmptyState(
            self.model, self.table.viewport(), lambda: actions.open_editor(None),
            self.files.crontab_dialog,
        )  # fmt: skip
        self._update_actions()

    # -- building --------------------------------------------------------------------------------

    def _make_table(self) -> QTableView:
        table = QTableView(self)
        table.setObjectName("schedulesTable")
        table.setModel(self.proxy)
        table.setSortingEnabled(True)
        table.sortByColumn(Column.next_run, Qt.SortOrder.AscendingOrder)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._context_menu)
        table.doubleClicked.connect(self._double_clicked)
        table.verticalHeader().hide()
        table.setWordWrap(False)
        self.table = table
        self._columns = ColumnFit(table, COLUMN_WIDTHS, Column.meaning)
        self._columns.fit()
        return table

    def _make_actions(self) -> dict[str, QAction]:
        def make(key: str, slot: Any, shortcut: Any = None) -> QAction:
            action = QAction(tr(ACTION_TEXTS[key]), self)
            action.setObjectName(f"action-{key}")
            action.triggered.connect(lambda *_: slot())
            if shortcut is not None:
                action.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
                # The table has the focus, and a shortcut must work there.
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(action)
            return action

        keys = QKeySequence.StandardKey
        acts = {
            "new": make("new", lambda: self._app.open_editor(None), keys.New),
            "edit": make(
                "edit",
                self.edit_selected,
                [QKeySequence(Qt.Key.Key_Return), QKeySequence(Qt.Key.Key_Enter)],
            ),
            "duplicate": make("duplicate", self.duplicate_selected, QKeySequence("Ctrl+D")),
            "delete": make("delete", self.delete_selected, keys.Delete),
            "run": make("run", self.run_selected),
            "stop": make("stop", self.stop_selected),
            "toggle": make("toggle", self.toggle_selected),
            "history": make("history", self.history_selected),
            "timeline": make("timeline", self._app.open_timeline),
            "pause_all": make("pause_all", self._pause_all),
            "import": make("import", self.files.import_dialog),
            "crontab": make("crontab", self.files.crontab_dialog),
            "export": make("export", self.files.export_dialog),
            "data": make("data", self.files.open_data_folder),
            "settings": make("settings", self._app.open_settings),
            "quit": make("quit", self._app.quit, keys.Quit),
        }
        acts["pause_all"].setCheckable(True)
        return acts

    def _make_menus_and_toolbar(self) -> None:
        acts = self.acts
        file_menu = self.menuBar().addMenu(tr("&File"))
        self._menus = [(file_menu, "&File")]
        for key in ("new", "import", "crontab", "export", None, "pause_all", "data", "settings",
                    None, "quit"):  # fmt: skip
            file_menu.addSeparator() if key is None else file_menu.addAction(acts[key])
        schedule_menu = self.menuBar().addMenu(tr("&Schedule"))
        self._menus.append((schedule_menu, "&Schedule"))
        self._fill_schedule_menu(schedule_menu)
        bar = QToolBar(tr("Schedules"), self)
        self._toolbar = bar
        bar.setObjectName("toolbar")
        bar.setMovable(False)
        for key in ("new", "edit", "duplicate", "delete", "run", "stop", "toggle", "history",
                    "timeline"):  # fmt: skip
            bar.addAction(acts[key])
        bar.addSeparator()
        bar.addAction(acts["pause_all"])
        bar.addWidget(self.search)
        self.addToolBar(bar)

    def _fill_schedule_menu(self, menu: QMenu) -> None:
        for key in ("edit", "duplicate", "delete", None, "run", "stop", "toggle", None, "history"):
            menu.addSeparator() if key is None else menu.addAction(self.acts[key])

    # -- live updates ----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read every schedule again (on first show, or after another process changed them)."""
        chosen = [schedule.id for schedule in self.selected()]
        self.model.load()  # the proxy sorts the new rows as it maps them
        # The selection is of schedules, not of row numbers: the same ones, wherever they are now.
        for schedule_id in chosen:
            self.select(schedule_id, add=True)
        self._after_change()

    def set_tray_missing(self, missing: bool) -> None:
        """Without a tray this window is the app: say that closing it stops the scheduler."""
        self.no_tray.setText(tr(NO_TRAY))
        self.no_tray.setVisible(missing)

    def _next_fire(self, schedule_id: int) -> datetime | None:
        return self._host.engine.state.next_fire(schedule_id)

    def ensure_loaded(self) -> None:
        if not self.model.loaded:
            self.refresh()

    def schedule_changed(self, schedule_id: int) -> None:
        """One schedule was created, edited, enabled, disabled or deleted: that row only."""
        if not self.model.loaded:
            return
        try:
            self.model.upsert(self._host.service.schedule(schedule_id))
        except NotFoundError:
            self.model.remove(schedule_id)
        self._after_change()

    def on_event(self, event: FireEvent | RunFinished | RunWaiting) -> None:
        if not self.model.loaded:
            return
        if isinstance(event, RunWaiting):
            self.model.run_waiting(event.schedule_id, event.reason)
            return
        if isinstance(event, FireEvent) and event.skipped is None:
            self.model.run_started(event.schedule_id)
        else:
            # Read with the others of this turn of the loop (a catch-up ends hundreds at once).
            self._last_runs[event.schedule_id] = event.run_id
        if not self._events_timer.isActive():
            self._events_timer.start(0)

    def _after_events(self) -> None:
        last, self._last_runs = self._last_runs, {}
        if self.model.loaded:
            try:
                runs = self._host.store.runs_by_id(last.values()) if last else {}
            except StoreError:  # closed: the app is quitting, its last events are not shown
                return
            for schedule_id, run_id in last.items():
                self.model.run_finished(schedule_id, runs.get(run_id), True)
            self.model.set_running(set(self._host.engine.state.running))
        self._update_actions()

    def engine_changed(self) -> None:
        """A new picture of the engine (a wake, "Pause all"): the times repainted, not the rows."""
        engine = self._host.engine.state
        self.model.paused_all = engine.paused
        self.acts["pause_all"].setChecked(engine.paused)
        if self.model.loaded:
            self.model.set_running(set(engine.running))
            self.model.times_changed()
        self._update_actions()

    def _after_change(self) -> None:
        self.empty.update_shown()
        engine = self._host.engine.state
        self.model.paused_all = engine.paused
        self.model.set_running(set(engine.running))
        self._update_actions()

    # -- the selection and its actions -----------------------------------------------------------

    def selected(self) -> list[Schedule]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.schedule_at(self.proxy.mapToSource(self.proxy.index(r, 0)).row())
                for r in rows]  # fmt: skip

    def select(self, schedule_id: int, *, add: bool = False) -> None:
        """Select that schedule's row (``add``: besides the rows already selected)."""
        row = self.model.row_of(schedule_id)
        if row is None:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return
        if add:
            flags = QItemSelectionModel.SelectionFlag
            self.table.selectionModel().select(index, flags.Select | flags.Rows)
        else:
            self.table.selectRow(index.row())
        self.table.scrollTo(index)

    def edit_selected(self) -> None:
        for schedule in self.selected()[:1]:
            self._app.open_editor(schedule.id)

    def duplicate_selected(self) -> list[int]:
        """A paused copy of each selected schedule, named "… (copy)", and the editor on it (on
        one copy, which Cancel takes back): two copies never both run before the user made the
        copy their own."""
        created = []
        service = self._host.service
        for schedule in self.selected():
            source = service.schedule_json(schedule)
            params = {key: source[key] for key in ("expr", "tz", "action", "policies", "notes")}
            params["name"] = schedule.name + COPY_SUFFIX
            params["enabled"] = False
            if self._attempt(lambda p=params: created.append(service.create_schedule(p)["id"])):
                self.schedule_changed(created[-1])
        if created:
            self.select(created[-1])
        if len(created) == 1:
            self._app.open_editor(created[0], fresh_copy=True)
        return created

    def delete_selected(self) -> bool:
        chosen = self.selected()
        if not chosen:
            return False
        question = (
            tr("Delete “{name}”? Its history is deleted too.", name=chosen[0].name)
            if len(chosen) == 1
            else tr("Delete {count} schedules? Their history is deleted too.", count=len(chosen))
        )
        answer = QMessageBox.question(
            self,
            tr("Delete schedule"),
            question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        running = self._host.engine.state.running
        for schedule in chosen:
            for run_id in running.get(schedule.id, ()):
                self._host.engine.stop_run(run_id)
            self._attempt(lambda s=schedule: self._host.service.delete_schedule({"id": s.id}))
            self.model.remove(schedule.id)
        self._update_actions()
        return True

    def run_selected(self) -> None:
        for schedule in self.selected():
            self._host.engine.run_now(schedule.id, partial(self._started, schedule))

    def _started(self, schedule: Schedule, outcome: int | Exception) -> None:
        if isinstance(outcome, DomiError):
            self._failed(outcome)
        elif isinstance(outcome, Exception):
            raise outcome
        else:
            self.statusBar().showMessage(
                tr("Started {name} (run {run_id}).", name=schedule.name, run_id=outcome), 10_000
            )
        self._update_actions()

    def stop_selected(self) -> list[int]:
        stopped = []
        running = self._host.engine.state.running
        for schedule in self.selected():
            runs = running.get(schedule.id, ())
            for run_id in runs:
                self._host.engine.stop_run(run_id)
                stopped.append(run_id)
            message = "Stopping {name}." if runs else "{name} is not running."
            self.statusBar().showMessage(tr(message, name=schedule.name), 10_000)
        return stopped

    def toggle_selected(self) -> None:
        chosen = self.selected()
        enable = bool(chosen) and not chosen[0].enabled
        for schedule in chosen:
            self._set_enabled(schedule.id, enable)

    def history_selected(self) -> None:
        chosen = self.selected()
        self._app.open_history(chosen[0].id if chosen else None)

    def _set_enabled(self, schedule_id: int, enabled: bool) -> None:
        if self._attempt(lambda: self._host.service.set_enabled({"id": schedule_id}, enabled)):
            self.schedule_changed(schedule_id)

    def _pause_all(self) -> None:
        self._host.engine.set_paused(self.acts["pause_all"].isChecked())
        self.engine_changed()

    def _update_actions(self) -> None:
        chosen = self.selected()
        one = len(chosen) == 1
        for key in ("duplicate", "delete", "run", "toggle"):
            self.acts[key].setEnabled(bool(chosen))
        self.acts["edit"].setEnabled(one)
        engine = self._host.engine.state
        self.acts["stop"].setEnabled(any(s.id in engine.running for s in chosen))
        paused = bool(chosen) and not chosen[0].enabled
        self.acts["toggle"].setText(tr("Resume") if paused else tr("Pause"))
        self.acts["pause_all"].setChecked(engine.paused)
        total = self.model.rowCount()
        self.statusBar().setToolTip(
            tr("{shown} of {total} schedules", shown=self.proxy.rowCount(), total=total)
        )

    def _attempt(self, step: Any) -> bool:
        try:
            step()
        except DomiError as error:
            self._failed(error)
            return False
        return True

    def _failed(self, error: DomiError) -> None:
        log.warning("schedules window: %s", error)
        QMessageBox.warning(self, tr("domi-desktop"), tr("Cannot do that: {reason}", reason=error))

    # -- events ----------------------------------------------------------------------------------

    def _search(self, text: str) -> None:
        self.proxy.set_search(text)
        self._update_actions()

    def _double_clicked(self, index: QModelIndex) -> None:
        if index.column() != Column.enabled:
            self._app.open_editor(int(index.data(ID_ROLE)))

    def _context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        if index.isValid() and not self.table.selectionModel().isRowSelected(index.row()):
            self.table.selectRow(index.row())
        menu = QMenu(self)
        menu.addAction(self.acts["new"])
        menu.addSeparator()
        self._fill_schedule_menu(menu)
        menu.popup(self.table.viewport().mapToGlobal(position))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() in (
            QEvent.Type.Enter,
            QEvent.Type.Leave,
        ):
            self._order.pointer(event.type() == QEvent.Type.Enter)
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()

    def retranslate(self) -> None:
        """Every text again in the language just chosen, the columns fitted to it."""
        self.setWindowTitle(tr("domi-desktop"))
        self.search.setPlaceholderText(tr("Search schedules"))
        for key, action in self.acts.items():
            action.setText(tr(ACTION_TEXTS[key]))
        for menu, text in self._menus:
            menu.setTitle(tr(text))
        self._toolbar.setWindowTitle(tr("Schedules"))
        self.no_tray.setText(tr(NO_TRAY))
        self.model.texts_changed()
        self._columns.fit()
        self._update_actions()

    def showEvent(self, event: QShowEvent) -> None:
        self.ensure_loaded()
        super().showEvent(event)
        self._order.check()  # what changed while hidden

    def closeEvent(self, event: QCloseEvent) -> None:
        # Without a tray this window is the app: closing it quits, or nothing would be left.
        if self.isVisible() and not self._app.has_tray and not self._app.quit():
            event.ignore()
            return
        super().closeEvent(event)
