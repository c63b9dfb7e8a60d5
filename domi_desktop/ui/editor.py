"""The schedule editor (SPEC §7): name, cron with live validation, zone, next fires, action,
policies and the "What if the laptop sleeps?" panel. It saves through the service layer, so the
dialog accepts exactly what the CLI and the RPC server accept.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.api.service import Service
from domi_desktop.api.wire import MAX_NAME, MAX_SECONDS, Json, parse_action, parse_policies
from domi_desktop.cron import LOCAL, CronError, describe, next_run, parse, zone_for
from domi_desktop.errors import DomiError, ParamError
from domi_desktop.model import CatchUp, Overlap, Policies
from domi_desktop.platform.timezone import local_zone_name
from domi_desktop.timefmt import transition_day
from domi_desktop.ui.editor_sleep import SleepPanel
from domi_desktop.ui.editor_widgets import (
    ERROR_COLOR,
    CronEdit,
    PairsTable,
    ZonePicker,
    error_label,
)
from domi_desktop.ui.i18n import cron_language, format_moment, register, tr

PRESETS = (
    ("Every minute", "* * * * *"),
    ("Every 5 minutes", "*/5 * * * *"),
    ("Every 15 minutes", "*/15 * * * *"),
    ("Hourly", "0 * * * *"),
    ("Daily at 09:00", "0 9 * * *"),
    ("Weekdays at 09:00", "0 9 * * 1-5"),
    ("Weekly on Monday at 09:00", "0 9 * * 1"),
    ("Monthly on the 1st at 09:00", "0 9 1 * *"),
)
DEFAULT_EXPR = "0 9 * * *"
"""A new schedule starts valid, on the running example's time."""
PREVIEW_COUNT = 10
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
DST_COLOR = QColor("#b26a00")
SECRET_TIP = "Only the secret's name is kept here; its value is read from the keychain at run time."

CATCH_UP = {
    CatchUp.latest: (
        "Run once, late",
        "After sleep or shutdown, the most recent missed run is run once, marked late; "
        "older missed runs are recorded as skipped.",
    ),
    CatchUp.skip: (
        "Skip missed runs",
        "A run missed by more than a minute is recorded as skipped; the schedule waits for "
        "its next due time.",
    ),
}
OVERLAP = {
    Overlap.skip: ("Skip", "While the previous run is still going, a new one is skipped (busy)."),
    Overlap.queue: ("Queue", "A new run waits for the previous one to finish (at most one waits)."),
    Overlap.parallel: ("Run in parallel", "A new run starts alongside the previous one."),
    Overlap.replace: ("Replace", "The previous run is stopped, then the new one starts."),
}

FIELDS = {
    "name": "nameError",
    "expr": "cronError",
    "tz": "zoneError",
    "action": "actionError",
    "policies": "policiesError",
}
"""Where a problem is shown: the service's parameter name (``action.env`` → ``action``) → the
object name of the label under that field."""


def _field_of(param: str) -> str:
    head = param.split(".", 1)[0]
    return head if head in FIELDS else "general"


def _param_message(error: ParamError) -> str:
    # ParamError's text starts with the parameter's name; the field it is shown under says that.
    return str(error).removeprefix(f"{error.param}: ")


def _help_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def _stacked(*widgets: QWidget) -> QWidget:
    """A field with its messages right under it, as one form row."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def _row(*widgets: QWidget, stretch: int = 0) -> QWidget:
    """Widgets side by side; the one at index ``stretch`` takes the spare width."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if index == stretch else 0)
    return box


def _seconds_spin(name: str, *, zero: str | None = None, maximum: int = MAX_SECONDS) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(0, maximum)
    spin.setSuffix(tr(" s"))
    if zero is not None:
        spin.setSpecialValueText(zero)  # shown at the minimum, 0: "no limit", "none"
    return spin


def _enum_combo(name: str, choices: dict[Any, tuple[str, str]]) -> QComboBox:
    """A combo over a policy enum; each item's data is the value the service takes."""
    combo = QComboBox()
    combo.setObjectName(name)
    for member, (label, _help) in choices.items():
        combo.addItem(tr(label), member.value)
    return combo


@dataclass(frozen=True, slots=True)
class _Form:
    """What the dialog holds right now: the request it would send and what stops it."""

    request: Json
    problems: dict[str, str]
    """Field (``name``, ``expr``, ``tz``, ``action``, ``policies``, ``general``) → message."""
    policies: Policies | None


class EditorDialog(QDialog):
    """Create a schedule, or edit one when ``schedule_id`` is given; ``saved`` carries its id."""

    saved = Signal(int)

    def __init__(
        self,
        service: Service,
        *,
        secret_names: Callable[[], list[str]],
        schedule_id: int | None = None,
        now: Callable[[], datetime] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._secret_names = secret_names
        self._schedule_id = schedule_id
        self._now = now or service.clock.now
        self._save_error: tuple[str, str] | None = None
        """A refusal from the service at the last save; it holds until the next edit."""
        self._name_touched = False
        """A new dialog does not greet the user with "a name is required" in red."""
        self.setWindowTitle(tr("New schedule"))
        self.setMinimumWidth(720)
        self._errors = {field: error_label(name) for field, name in FIELDS.items()}

        columns = QHBoxLayout()
        columns.setSpacing(12)
        left = QVBoxLayout()
        left.addWidget(self._build_schedule())
        left.addWidget(self._build_preview())
        self.sleep = SleepPanel(self)
        left.addWidget(self.sleep, 1)
        right = QVBoxLayout()
        right.addWidget(self._build_action(), 1)
        right.addWidget(self._build_policies())
        columns.addLayout(left, 1)
        columns.addLayout(right, 1)

        self.status = _help_label()
        self.status.setObjectName("status")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("save")
        # Qt's own button texts come from Qt's translations, which the app does not load.
        self.save_button.setText(tr("Save"))
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(buttons)

        layout = QVBoxLayout(self)
        layout.addLayout(columns, 1)
        layout.addLayout(bottom)

        if schedule_id is None:
            self.cron.set_text(DEFAULT_EXPR)
        else:
            self._load(service.get_schedule({"id": schedule_id}))
        self._connect()
        self._schedule_edited()
        hint = self.sizeHint()
        self.resize(max(hint.width(), 1000), hint.height())

    # -- building ------------------------------------------------------------------------------

    def _build_schedule(self) -> QGroupBox:
        self.name = QLineEdit()
        self.name.setObjectName("name")
        self.name.setAccessibleName(tr("Name"))
        self.name.setPlaceholderText(tr("e.g. Rate-limit report for the login endpoint"))
        self.name.setMaxLength(MAX_NAME + 50)  # room to show "too long" rather than cut silently

        self.cron = CronEdit()
        self.cron.setObjectName("cron")
        self.cron.setMinimumWidth(self.fontMetrics().horizontalAdvance("M") * 18)
        self.cron.setAccessibleName(tr("Cron expression"))
        self.cron.setToolTip(
            tr("Five fields: minute, hour, day of month, month, day of week (e.g. 0 9 * * 1-5).")
        )
        self.presets = QComboBox()
        self.presets.setObjectName("presets")
        self.presets.setAccessibleName(tr("Presets"))
        self.presets.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.presets.setMinimumContentsLength(14)
        self.presets.addItem(tr("Custom"), "")
        for label, expr in PRESETS:
            self.presets.addItem(tr(label), expr)
        self.description = QLabel()
        self.description.setObjectName("description")
        self.description.setWordWrap(True)

        self.zone = ZonePicker()
        self.zone.setObjectName("zone")
        self.zone.setAccessibleName(tr("Time zone"))
        self.zone.setToolTip(tr("Type any part of a zone name to search, e.g. “york”."))

        group = QGroupBox(tr("Schedule"))
        form = QFormLayout(group)
        form.addRow(tr("Name"), _stacked(self.name, self._errors["name"]))
        form.addRow(
            tr("When"),
            _stacked(
                _row(self.cron, self.presets),
                self._errors["expr"],
                self.description,
            ),
        )
        form.addRow(tr("Time zone"), _stacked(self.zone, self._errors["tz"]))
        return group

    def _build_preview(self) -> QGroupBox:
        self.preview = QTableWidget(PREVIEW_COUNT, 1)
        self.preview.setObjectName("preview")
        self.preview.setAccessibleName(tr("Next runs"))
        self.preview.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.preview.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.preview.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.preview.verticalHeader().setVisible(False)
        self.preview.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.preview.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.preview.setAlternatingRowColors(True)
        self.preview.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.preview.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.preview.setFixedHeight(
            self.preview.horizontalHeader().sizeHint().height()
            + PREVIEW_COUNT * self.preview.verticalHeader().defaultSectionSize()
            + 2 * self.preview.frameWidth()
        )
        group = QGroupBox(tr("Next {count} runs", count=PREVIEW_COUNT))
        layout = QVBoxLayout(group)
        layout.addWidget(self.preview)
        return group

    def _build_action(self) -> QGroupBox:
        self.kind_command = QRadioButton(tr("Run a command"))
        self.kind_command.setObjectName("kindCommand")
        self.kind_command.setChecked(True)
        self.kind_http = QRadioButton(tr("Send an HTTP request"))
        self.kind_http.setObjectName("kindHttp")
        kinds = QButtonGroup(self)
        kinds.addButton(self.kind_command)
        kinds.addButton(self.kind_http)
        self.action_pages = QStackedWidget()
        self.action_pages.addWidget(self._build_command_page())
        self.action_pages.addWidget(self._build_http_page())

        group = QGroupBox(tr("Action"))
        layout = QVBoxLayout(group)
        choice = QHBoxLayout()
        choice.addWidget(self.kind_command)
        choice.addWidget(self.kind_http)
        choice.addStretch(1)
        layout.addLayout(choice)
        layout.addWidget(self.action_pages, 1)
        layout.addWidget(self._errors["action"])
        return group

    def _secrets_hint(self) -> QLabel | None:
        if self._secret_names():
            return None
        return _help_label(tr("No secrets stored yet. Add one with: domi-desktop secret set NAME"))

    def _build_command_page(self) -> QWidget:
        self.command = QLineEdit()
        self.command.setObjectName("command")
        self.command.setAccessibleName(tr("Command"))
        self.command.setPlaceholderText(tr("e.g. python3 report.py --endpoint login"))
        self.shell = QCheckBox(tr("Run in a shell (pipes, redirections, $VARIABLES)"))
        self.shell.setObjectName("shell")
        self.shell.setToolTip(
            tr(
                "Without a shell the line is split into arguments like a shell would, but run directly."
            )
        )
        self.cwd = QLineEdit()
        self.cwd.setObjectName("cwd")
        self.cwd.setAccessibleName(tr("Working folder"))
        self.cwd.setPlaceholderText(tr("Home folder"))
        browse = QToolButton()
        browse.setText("…")
        browse.setToolTip(tr("Choose a folder"))
        browse.setAccessibleName(tr("Choose a folder"))
        browse.clicked.connect(self._browse_cwd)
        self.env = PairsTable(tr("Variable"), tr("Value"))
        self.env.setObjectName("env")
        self.env.setToolTip(
            tr("Jobs get a small, explicit environment, not your shell's: set what they need.")
        )
        self.secret_env = PairsTable(tr("Variable"), tr("Secret"), choices=self._secret_names)
        self.secret_env.setObjectName("secretEnv")
        self.secret_env.setToolTip(tr(SECRET_TIP))
        self.stdin = QPlainTextEdit()
        self.stdin.setObjectName("stdin")
        self.stdin.setAccessibleName(tr("Standard input"))
        self.stdin.setPlaceholderText(tr("Optional text for the command's standard input"))
        self.stdin.setFixedHeight(self.fontMetrics().lineSpacing() * 2 + 14)

        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 4, 0, 0)
        form.addRow(tr("Command"), self.command)
        form.addRow("", self.shell)
        form.addRow(tr("Working folder"), _row(self.cwd, browse))
        form.addRow(tr("Environment"), self.env)
        hint = self._secrets_hint()
        form.addRow(
            tr("Secrets"), self.secret_env if hint is None else _stacked(self.secret_env, hint)
        )
        form.addRow(tr("Input"), self.stdin)
        return page

    def _build_http_page(self) -> QWidget:
        self.http_method = QComboBox()
        self.http_method.setObjectName("httpMethod")
        self.http_method.setAccessibleName(tr("Method"))
        self.http_method.addItems(HTTP_METHODS)
        self.http_url = QLineEdit()
        self.http_url.setObjectName("httpUrl")
        self.http_url.setAccessibleName(tr("URL"))
        self.http_url.setPlaceholderText("https://example.org/report")
        self.http_headers = PairsTable(tr("Header"), tr("Value"))
        self.http_headers.setObjectName("httpHeaders")
        self.secret_headers = PairsTable(tr("Header"), tr("Secret"), choices=self._secret_names)
        self.secret_headers.setObjectName("secretHeaders")
        self.secret_headers.setToolTip(tr(SECRET_TIP))
        self.http_body = QPlainTextEdit()
        self.http_body.setObjectName("httpBody")
        self.http_body.setAccessibleName(tr("Body"))
        self.http_body.setPlaceholderText(tr("Optional request body"))
        self.http_body.setFixedHeight(self.fontMetrics().lineSpacing() * 2 + 14)
        self.http_timeout = QDoubleSpinBox()
        self.http_timeout.setObjectName("httpTimeout")
        self.http_timeout.setRange(0.5, 3600)
        self.http_timeout.setDecimals(1)
        self.http_timeout.setValue(30)
        self.http_timeout.setSuffix(tr(" s"))

        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 4, 0, 0)
        form.addRow(tr("Request"), _row(self.http_method, self.http_url, stretch=1))
        form.addRow(tr("Headers"), self.http_headers)
        hint = self._secrets_hint()
        form.addRow(
            tr("Secret headers"),
            self.secret_headers if hint is None else _stacked(self.secret_headers, hint),
        )
        form.addRow(tr("Body"), self.http_body)
        form.addRow(tr("Timeout"), self.http_timeout)
        return page

    def _build_policies(self) -> QGroupBox:
        self.catch_up = _enum_combo("catchUp", CATCH_UP)
        self.catch_up.setAccessibleName(tr("Catch-up"))
        self.catch_up_help = _help_label()
        self.catch_up_within = QDoubleSpinBox()
        self.catch_up_within.setObjectName("catchUpWithin")
        self.catch_up_within.setRange(0, MAX_SECONDS / 3600)
        self.catch_up_within.setDecimals(1)
        self.catch_up_within.setSuffix(tr(" h"))
        self.catch_up_within.setSpecialValueText(tr("No limit"))
        self.catch_up_within.setToolTip(tr("A missed run older than this is skipped instead."))
        self.overlap = _enum_combo("overlap", OVERLAP)
        self.overlap.setAccessibleName(tr("If still running"))
        self.overlap_help = _help_label()
        self.concurrency_key = QLineEdit()
        self.concurrency_key.setObjectName("concurrencyKey")
        self.concurrency_key.setPlaceholderText(tr("This schedule alone"))
        self.concurrency_key.setToolTip(
            tr("Schedules with the same key never run at the same time.")
        )
        self.timeout = _seconds_spin("timeout", zero=tr("No limit"))
        self.timeout.setToolTip(tr("Stop the job (and everything it started) after this long."))
        self.retries = QSpinBox()
        self.retries.setObjectName("retries")
        self.retries.setRange(0, 100)
        self.retry_backoff = _seconds_spin("retryBackoff", maximum=86400)
        self.retry_backoff.setValue(30)
        self.retry_backoff.setPrefix(tr("first after "))
        self.retry_backoff.setToolTip(tr("The wait doubles for each further retry."))
        self.jitter = _seconds_spin("jitter", zero=tr("None"), maximum=86400)
        self.jitter.setToolTip(
            tr("Start up to this much later, at random, so many jobs do not start at once.")
        )

        group = QGroupBox(tr("Policies"))
        form = QFormLayout(group)
        form.addRow(tr("Missed runs"), _stacked(self.catch_up, self.catch_up_help))
        form.addRow(tr("Catch up only within"), self.catch_up_within)
        form.addRow(tr("If still running"), _stacked(self.overlap, self.overlap_help))
        form.addRow(tr("Overlap group"), self.concurrency_key)
        form.addRow(tr("Timeout"), self.timeout)
        form.addRow(tr("Retries"), _row(self.retries, self.retry_backoff, stretch=1))
        form.addRow(tr("Jitter"), self.jitter)
        form.addRow(self._errors["policies"])
        return group

    def _connect(self) -> None:
        self.cron.textChanged.connect(self._schedule_edited)
        self.zone.zone_changed.connect(self._schedule_edited)
        self.presets.currentIndexChanged.connect(self._preset_chosen)
        self.name.textChanged.connect(self._name_edited)
        for kind in (self.kind_command, self.kind_http):
            kind.toggled.connect(self._edited)
        for line in (self.command, self.cwd, self.http_url):
            line.textChanged.connect(self._edited)
        for text in (self.stdin, self.http_body):
            text.textChanged.connect(self._edited)
        for table in (self.env, self.secret_env, self.http_headers, self.secret_headers):
            table.changed.connect(self._edited)
        self.shell.toggled.connect(self._edited)
        self.http_method.currentIndexChanged.connect(self._edited)
        self.http_timeout.valueChanged.connect(self._edited)
        for combo in (self.catch_up, self.overlap):
            combo.currentIndexChanged.connect(self._policies_edited)
        for spin in (
            self.catch_up_within,
            self.timeout,
            self.retries,
            self.retry_backoff,
            self.jitter,
        ):
            spin.valueChanged.connect(self._policies_edited)
        self.concurrency_key.textChanged.connect(self._policies_edited)

    # -- loading -------------------------------------------------------------------------------

    def _load(self, schedule: Json) -> None:
        self.setWindowTitle(tr("Edit “{name}”", name=schedule["name"]))
        self._name_touched = True
        self.name.setText(schedule["name"])
        self.cron.setPlainText(schedule["expr"])
        self.zone.set_zone(schedule["tz"])
        action = schedule["action"]
        if action["kind"] == "http":
            self.kind_http.setChecked(True)
            if self.http_method.findText(action["method"]) < 0:
                self.http_method.addItem(action["method"])
            self.http_method.setCurrentText(action["method"])
            self.http_url.setText(action["url"])
            self.http_headers.set_pairs(action["headers"])
            self.secret_headers.set_pairs(action["secret_headers"])
            self.http_body.setPlainText(action["body"] or "")
            self.http_timeout.setValue(action["timeout"])
        else:
            shell = action["shell"]
            self.shell.setChecked(shell is not None)
            self.command.setText(shlex.join(action["argv"]) if shell is None else shell)
            self.cwd.setText(action["cwd"] or "")
            self.env.set_pairs(action["env"])
            self.secret_env.set_pairs(action["secret_env"])
            self.stdin.setPlainText(action["stdin"] or "")
        policies = schedule["policies"]
        self.catch_up.setCurrentIndex(self.catch_up.findData(policies["catch_up"]))
        self.catch_up_within.setValue((policies["catch_up_within"] or 0) / 3600)
        self.overlap.setCurrentIndex(self.overlap.findData(policies["overlap"]))
        self.concurrency_key.setText(policies["concurrency_key"] or "")
        self.timeout.setValue(round(policies["timeout"] or 0))
        self.retries.setValue(policies["retries"])
        self.retry_backoff.setValue(round(policies["retry_backoff"]))
        self.jitter.setValue(round(policies["jitter"]))

    # -- reacting to edits ---------------------------------------------------------------------

    def _name_edited(self) -> None:
        self._name_touched = True
        self._edited()

    def _edited(self) -> None:
        self._save_error = None
        self._update()

    def _policies_edited(self) -> None:
        self._save_error = None
        self._update(simulate=True)

    def _schedule_edited(self) -> None:
        self._save_error = None
        expr = self.cron.text()
        try:
            parsed = parse(expr)
        except CronError as error:
            self.cron.set_error_span(error.span)
            self.description.hide()
        else:
            self.cron.set_error_span(None)
            self.description.setText(describe(parsed, cron_language()))
            self.description.show()
        preset = self.presets.findData(expr.strip())
        self.presets.blockSignals(True)  # showing the match is not choosing a preset
        self.presets.setCurrentIndex(max(preset, 0))
        self.presets.blockSignals(False)
        self.refresh_preview()
        self._update(simulate=True)

    def _preset_chosen(self, index: int) -> None:
        expr = self.presets.itemData(index)
        if expr and expr != self.cron.text().strip():
            self.cron.set_text(expr)

    def _browse_cwd(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Working folder"), self.cwd.text())
        if folder:
            self.cwd.setText(folder)

    def refresh_preview(self) -> None:
        """Show the next 10 fires after ``now()``, also in the OS zone when it differs.

        Runs on every keystroke, so it uses ``next_run`` only: no database, no service call.
        """
        tz = self.zone.zone()
        try:
            expr = parse(self.cron.text())
        except CronError:
            expr = None
        fires: list[datetime] = []
        if expr is not None and tz is not None:
            zone = zone_for(tz)
            cursor: datetime | None = self._now()
            while len(fires) < PREVIEW_COUNT and cursor is not None:
                cursor = next_run(expr, cursor, zone)
                if cursor is not None:
                    fires.append(cursor)
        os_name = local_zone_name()
        headers = [self.zone.currentText().strip() or tr("Time zone")]
        zones: list[tzinfo | None] = [None]  # None: as next_run gave it, in the schedule's zone
        if tz is not None and tz not in (LOCAL, os_name):
            headers.append(tr("This computer ({zone})", zone=os_name or tr("local time")))
            zones.append(zone_for(LOCAL))
        self.preview.setColumnCount(len(headers))
        self.preview.setHorizontalHeaderLabels(headers)
        for row in range(PREVIEW_COUNT):
            for column, zone_of_column in enumerate(zones):
                if row >= len(fires):
                    self.preview.setItem(row, column, QTableWidgetItem())
                    continue
                moment = (
                    fires[row] if zone_of_column is None else fires[row].astimezone(zone_of_column)
                )
                self.preview.setItem(row, column, self._fire_item(moment))

    @staticmethod
    def _fire_item(moment: datetime) -> QTableWidgetItem:
        text = f"{format_moment(moment, year=True)} {moment.tzname() or ''}".rstrip()
        item = QTableWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, moment.isoformat())
        if transition_day(moment):
            item.setText(f"{text}  {tr('DST')}")
            item.setForeground(DST_COLOR)
            item.setToolTip(
                tr(
                    "The clocks change on this day (daylight saving time); cron's rules decide the run time."
                )
            )
        return item

    def _update(self, *, simulate: bool = False) -> None:
        form = self._collect()
        for field, label in self._errors.items():
            message = form.problems.get(field)
            if field == "name" and not self._name_touched:
                message = None
            label.setText(message or "")
            label.setVisible(message is not None)
        first = next(iter(form.problems.values()), "")
        self.status.setText(first)
        # A refused save is news; "why Save is disabled" is only a hint.
        failed = "general" in form.problems
        self.status.setStyleSheet(f"color: {ERROR_COLOR.name()};" if failed else "")
        self.save_button.setEnabled(not form.problems)
        self.save_button.setToolTip(first)
        self.action_pages.setCurrentIndex(1 if self.kind_http.isChecked() else 0)
        catch_up = CatchUp(self.catch_up.currentData())
        self.catch_up_help.setText(tr(CATCH_UP[catch_up][1]))
        self.catch_up_within.setEnabled(catch_up is CatchUp.latest)
        self.overlap_help.setText(tr(OVERLAP[Overlap(self.overlap.currentData())][1]))
        self.retry_backoff.setEnabled(self.retries.value() > 0)
        if simulate:
            schedule_ok = not {"expr", "tz"} & form.problems.keys()
            self.sleep.show_for(
                form.request["expr"] if schedule_ok else None,
                form.request["tz"] if schedule_ok else None,
                form.policies,
                self._now(),
            )

    # -- the request ---------------------------------------------------------------------------

    def _collect(self) -> _Form:
        problems: dict[str, str] = {}
        name = self.name.text().strip()
        if not name:
            problems["name"] = tr("A name is required.")
        elif len(name) > MAX_NAME:
            problems["name"] = tr(
                "The name is too long (at most {count} characters).", count=MAX_NAME
            )
        expr = self.cron.text()
        try:
            parse(expr)
        except CronError as error:
            problems["expr"] = error.message
        tz = self.zone.zone()
        if tz is None:
            typed = self.zone.currentText().strip()
            problems["tz"] = tr("Unknown time zone “{zone}”: pick one from the list.", zone=typed)
        action, action_problem = self._action_json()
        if action_problem is None:
            try:
                parse_action(action)
            except ParamError as error:
                action_problem = _param_message(error)
        if action_problem is not None:
            problems["action"] = action_problem
        policies: Policies | None = None
        policies_request = self._policies_json()
        try:
            policies = parse_policies(policies_request)
        except ParamError as error:
            problems["policies"] = _param_message(error)
        if self._save_error is not None:
            field, message = self._save_error
            problems.setdefault(field, message)
        request: Json = {
            "name": name,
            "expr": expr,
            "tz": tz,
            "action": action,
            "policies": policies_request,
        }
        if self._schedule_id is not None:
            request["id"] = self._schedule_id
        return _Form(request=request, problems=problems, policies=policies)

    def _action_json(self) -> tuple[Json, str | None]:
        """The action as the service takes it, and the first problem the user can fix here."""
        problem: str | None = None
        if self.kind_http.isChecked():
            url = self.http_url.text().strip()
            parts = urlsplit(url)
            if not url:
                problem = tr("Enter the URL to request.")
            elif parts.scheme not in ("http", "https") or not parts.hostname:
                problem = tr("The URL must start with http:// or https:// and name a host.")
            tables = (self.http_headers, self.secret_headers)
            action: Json = {
                "kind": "http",
                "method": self.http_method.currentText(),
                "url": url,
                "headers": dict(self.http_headers.pairs()),
                "secret_headers": dict(self.secret_headers.pairs()),
                "body": self.http_body.toPlainText() or None,
                "timeout": self.http_timeout.value(),
            }
        else:
            line = self.command.text().strip()
            shell = self.shell.isChecked()
            argv: list[str] = []
            if not line:
                problem = tr("Enter the command to run.")
            elif not shell:
                try:
                    argv = shlex.split(line)
                except ValueError:
                    problem = tr("The command has an unclosed quote.")
            tables = (self.env, self.secret_env)
            action = {
                "kind": "command",
                "argv": argv,
                "shell": line if shell else None,
                "cwd": self.cwd.text().strip() or None,
                "env": dict(self.env.pairs()),
                "secret_env": dict(self.secret_env.pairs()),
                "stdin": self.stdin.toPlainText() or None,
            }
        for table in tables:
            problem = problem or table.problem()
        return action, problem

    def _policies_json(self) -> Json:
        return {
            "catch_up": self.catch_up.currentData(),
            "catch_up_within": self.catch_up_within.value() * 3600 or None,
            "overlap": self.overlap.currentData(),
            "concurrency_key": self.concurrency_key.text().strip() or None,
            "timeout": self.timeout.value() or None,
            "retries": self.retries.value(),
            "retry_backoff": self.retry_backoff.value(),
            "jitter": self.jitter.value(),
        }

    def _save(self) -> None:
        form = self._collect()
        if form.problems:
            return
        try:
            if self._schedule_id is None:
                saved = self._service.create_schedule(form.request)
            else:
                saved = self._service.update_schedule(form.request)
        except ParamError as error:
            self._save_error = (_field_of(error.param), _param_message(error))
            self._update()
            return
        except DomiError as error:
            self._save_error = ("general", tr("Could not save: {error}", error=str(error)))
            self._update()
            return
        self._schedule_id = saved["id"]
        self.saved.emit(saved["id"])
        self.accept()


register(
    "zh",
    {
        "Every minute": "每分钟",
        "Every 5 minutes": "每 5 分钟",
        "Every 15 minutes": "每 15 分钟",
        "Hourly": "每小时",
        "Daily at 09:00": "每天 09:00",
        "Weekdays at 09:00": "工作日 09:00",
        "Weekly on Monday at 09:00": "每周一 09:00",
        "Monthly on the 1st at 09:00": "每月 1 日 09:00",
        "Run once, late": "补跑一次(标记为迟到)",
        "After sleep or shutdown, the most recent missed run is run once, marked late; "
        "older missed runs are recorded as skipped.": (
            "休眠或关机后,只补跑最近一次错过的运行,并标记为迟到;更早错过的运行记为跳过。"
        ),
        "Skip missed runs": "跳过错过的运行",
        "A run missed by more than a minute is recorded as skipped; the schedule waits for "
        "its next due time.": "错过超过一分钟的运行记为跳过;等待下一次到期时间。",
        "Skip": "跳过",
        "While the previous run is still going, a new one is skipped (busy).": (
            "上一次运行尚未结束时,新的运行被跳过(忙)。"
        ),
        "Queue": "排队",
        "A new run waits for the previous one to finish (at most one waits).": (
            "新的运行等待上一次结束(最多一个在等待)。"
        ),
        "Run in parallel": "并行运行",
        "A new run starts alongside the previous one.": "新的运行与上一次同时进行。",
        "Replace": "替换",
        "The previous run is stopped, then the new one starts.": "先停止上一次运行,再开始新的运行。",
        " s": " 秒",
        " h": " 小时",
        "New schedule": "新建计划",
        "Save": "保存",
        "Cancel": "取消",
        "Name": "名称",
        "e.g. Rate-limit report for the login endpoint": "例如:登录接口限流报告",
        "Cron expression": "Cron 表达式",
        "Five fields: minute, hour, day of month, month, day of week (e.g. 0 9 * * 1-5).": (
            "五个字段:分钟、小时、日、月、星期(例如 0 9 * * 1-5)。"
        ),
        "Presets": "预设",
        "Custom": "自定义",
        "Time zone": "时区",
        "Type any part of a zone name to search, e.g. “york”.": (
            "输入时区名称的任意部分即可搜索,例如 “york”。"
        ),
        "Schedule": "计划",
        "When": "时间",
        "Next runs": "接下来的运行",
        "Next {count} runs": "接下来的 {count} 次运行",
        "Run a command": "运行命令",
        "Send an HTTP request": "发送 HTTP 请求",
        "Action": "操作",
        "No secrets stored yet. Add one with: domi-desktop secret set NAME": (
            "还没有保存任何密钥。可用以下命令添加:domi-desktop secret set 名称"
        ),
        "Command": "命令",
        "e.g. python3 report.py --endpoint login": "例如:python3 report.py --endpoint login",
        "Run in a shell (pipes, redirections, $VARIABLES)": "在 shell 中运行(管道、重定向、$变量)",
        "Without a shell the line is split into arguments like a shell would, but run directly.": (
            "不使用 shell 时,这一行会像 shell 那样拆分为参数,但直接运行。"
        ),
        "Working folder": "工作目录",
        "Home folder": "主目录",
        "Choose a folder": "选择文件夹",
        "Variable": "变量",
        "Value": "值",
        "Secret": "密钥",
        "Jobs get a small, explicit environment, not your shell's: set what they need.": (
            "任务只获得一个精简、明确的环境,而不是你的 shell 环境:请设置它需要的变量。"
        ),
        "Standard input": "标准输入",
        "Optional text for the command's standard input": "可选:作为命令标准输入的文本",
        "Environment": "环境变量",
        "Secrets": "密钥",
        SECRET_TIP: "这里只保存密钥的名称;其值在运行时从钥匙串读取。",
        "Input": "输入",
        "Method": "方法",
        "URL": "URL",
        "Header": "请求头",
        "Body": "请求体",
        "Optional request body": "可选的请求体",
        "Request": "请求",
        "Headers": "请求头",
        "Secret headers": "密钥请求头",
        "Timeout": "超时",
        "Catch-up": "补跑",
        "No limit": "不限",
        "A missed run older than this is skipped instead.": "错过超过这个时长的运行将被跳过。",
        "If still running": "仍在运行时",
        "This schedule alone": "仅本计划自身",
        "Schedules with the same key never run at the same time.": "键相同的计划永远不会同时运行。",
        "Stop the job (and everything it started) after this long.": (
            "超过这个时长就停止任务(及其启动的所有进程)。"
        ),
        "first after ": "首次间隔 ",
        "The wait doubles for each further retry.": "之后每次重试的等待时间加倍。",
        "None": "无",
        "Start up to this much later, at random, so many jobs do not start at once.": (
            "随机延后最多这么久再启动,避免许多任务同时开始。"
        ),
        "Policies": "策略",
        "Missed runs": "错过的运行",
        "Catch up only within": "仅在此时限内补跑",
        "Overlap group": "互斥组",
        "Retries": "重试次数",
        "Jitter": "随机延迟",
        "Edit “{name}”": "编辑 “{name}”",
        "This computer ({zone})": "本机 ({zone})",
        "local time": "本地时间",
        "DST": "夏令时",
        "The clocks change on this day (daylight saving time); cron's rules decide the run time.": (
            "这一天时钟会调整(夏令时);运行时间按 cron 的规则确定。"
        ),
        "A name is required.": "必须填写名称。",
        "The name is too long (at most {count} characters).": "名称太长(最多 {count} 个字符)。",
        "Unknown time zone “{zone}”: pick one from the list.": "未知时区 “{zone}”:请从列表中选择。",
        "Enter the URL to request.": "请输入要请求的 URL。",
        "The URL must start with http:// or https:// and name a host.": (
            "URL 必须以 http:// 或 https:// 开头,并包含主机名。"
        ),
        "Enter the command to run.": "请输入要运行的命令。",
        "The command has an unclosed quote.": "命令中有未闭合的引号。",
        "Could not save: {error}": "无法保存:{error}",
    },
)
