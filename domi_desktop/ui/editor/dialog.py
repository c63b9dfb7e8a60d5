"""The schedule editor: name, cron with live validation, presets and a time picker, zone,
next fires, the action, policies, the "What if the laptop sleeps?" panel and the user's notes. It
saves through the service layer, so the dialog accepts exactly what the CLI and the RPC server
accept.

It fits small screens at any scale: the form scrolls while Save stays in view, and its two columns
stack when the window is narrow. Tab leaves every field; closing with unsaved edits asks first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from PySide6.QtCore import QEvent, QSize, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.cron import CronError, parse
from domi_desktop.errors import DomiError, ParamError
from domi_desktop.frontdoor.service import Service
from domi_desktop.frontdoor.wire import MAX_NAME, Json, parse_action, parse_policies
from domi_desktop.model import Policies
from domi_desktop.ports import SecretStore
from domi_desktop.ui.editor.action import HTTP_TIMEOUT, ActionBox
from domi_desktop.ui.editor.alerts import AlertsBox
from domi_desktop.ui.editor.conditions import ConditionsBox
from domi_desktop.ui.editor.monitoring import MonitoringBox
from domi_desktop.ui.editor.notes import NotesBox
from domi_desktop.ui.editor.policies import PoliciesBox
from domi_desktop.ui.editor.preview import PreviewBox
from domi_desktop.ui.editor.schedule import ScheduleBox, wall_time, without_at
from domi_desktop.ui.editor.sleep import SleepPanel
from domi_desktop.ui.editor.widgets import (
    error_label,
    guard_wheel,
    help_label,
)
from domi_desktop.ui.i18n import (
    Texts,
    qt_catalog_loaded,
    register,
    tr,
)
from domi_desktop.ui.palette import colors, css_color

DEFAULT_EXPR = "0 9 * * *"
"""A new schedule starts valid, on the running example's time."""
PREVIEW_COUNT = 10
MIN_SIZE = QSize(480, 360)
"""Small enough for a 1280x720 logical screen at any scale; the form scrolls inside."""

FIELDS = ("name", "expr", "tz", "action", "policies", "notes")
"""Where a problem is shown: the service's parameter name (``action.env`` → ``action``)."""


def _field_of(param: str) -> str:
    head = param.split(".", 1)[0]
    return head if head in FIELDS else "general"


def _param_message(error: ParamError) -> str:
    # ParamError's text starts with the parameter's name; the field it is shown under says that.
    return str(error).removeprefix(f"{error.param}: ")


def ask_discard(parent: QWidget) -> bool:
    """Whether the user wants their unsaved edits thrown away."""
    box = QMessageBox(parent)
    box.setObjectName("discardEdits")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(tr("Unsaved changes"))
    box.setText(tr("Discard the changes to this schedule?"))
    discard = box.addButton(tr("Discard changes"), QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton(tr("Keep editing"), QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)
    box.exec()
    return box.clickedButton() is discard


@dataclass(frozen=True, slots=True)
class _Form:
    """What the dialog holds right now: the request it would send and what stops it."""

    request: Json
    problems: dict[str, str]
    """Field (``name``, ``expr``, ``tz``, ``action``, ``policies``, ``notes``, ``general``) →
    message."""
    policies: Policies | None


class EditorDialog(QDialog):
    """Create a schedule, or edit one when ``schedule_id`` is given; ``saved`` carries its id.

    With ``secrets`` a secret can be created from the dialog; ``confirm_discard`` is asked before
    unsaved edits are thrown away (a question box by default).
    """

    saved = Signal(int)

    def __init__(
        self,
        service: Service,
        *,
        secret_names: Callable[[], list[str]] | None = None,
        secrets: SecretStore | None = None,
        schedule_id: int | None = None,
        now: Callable[[], datetime] | None = None,
        confirm_discard: Callable[[QWidget], bool] = ask_discard,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._schedule_id = schedule_id
        self._now = now or service.clock.now
        self._confirm_discard = confirm_discard
        self._save_error: tuple[str, str] | None = None
        """A refusal from the service at the last save; it holds until the next edit."""
        self._name_touched = False
        """A new dialog does not greet the user with "a name is required" in red."""
        self._title: tuple[str, dict[str, str]] = ("New schedule", {})
        self.texts = Texts()
        self._errors = {
            "name": error_label("nameError"),
            "expr": error_label("cronError"),
            "tz": error_label("zoneError"),
            "notes": error_label("notesError"),
        }
        self.setMinimumSize(MIN_SIZE)

        names = secret_names or (secrets.names if secrets is not None else list)
        self.action = ActionBox(self.texts, names, secrets)
        self._errors["action"] = self.action.error
        self.policies = PoliciesBox(self.texts)
        self._errors["policies"] = self.policies.error
        self.conditions = ConditionsBox(self.texts)
        self.alerts = AlertsBox(self.texts)
        self.monitoring = MonitoringBox(self.texts)
        self.sleep = SleepPanel()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        self.schedule = ScheduleBox(self.texts, self._errors)
        self.name = self.schedule.name
        self.cron = self.schedule.cron
        self.zone = self.schedule.zone
        left_layout.addWidget(self.schedule)
        self.preview = PreviewBox(self.texts)
        left_layout.addWidget(self.preview)
        left_layout.addWidget(self.sleep, 1)
        self.notes = NotesBox(self.texts, self._errors["notes"])
        left_layout.addWidget(self.notes)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.action, 1)
        right_layout.addWidget(self.policies)
        right_layout.addWidget(self.conditions)
        right_layout.addWidget(self.alerts)
        right_layout.addWidget(self.monitoring)
        content = QWidget()
        self._columns = QBoxLayout(QBoxLayout.Direction.LeftToRight, content)
        self._columns.setSpacing(12)
        self._columns.addWidget(left, 1)
        self._columns.addWidget(right, 1)
        self._wide = (
            left.minimumSizeHint().width()
            + right.minimumSizeHint().width()
            + self._columns.spacing()
            + 2 * self._columns.contentsMargins().left()
        )
        self.form_area = QScrollArea()
        self.form_area.setObjectName("editorScroll")
        self.form_area.setWidgetResizable(True)
        self.form_area.setFrameShape(QFrame.Shape.NoFrame)
        self.form_area.setWidget(content)

        self.status = help_label()
        self.status.setObjectName("status")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("save")
        self._name_buttons()
        self.buttons.accepted.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(self.form_area, 1)
        layout.addLayout(bottom)

        if schedule_id is None:
            self.cron.set_text(DEFAULT_EXPR)
        else:
            self._load(service.get_schedule({"id": schedule_id}))
        self._retitle()
        self._connect()
        self._schedule_edited()
        self._initial = self._collect().request
        self._fit_screen(content)
        guard_wheel(self)
        for keys in ("Ctrl+S", "Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, self._save)
        self.name.setFocus()

    # -- building ------------------------------------------------------------------------------

    def _connect(self) -> None:
        self.cron.textChanged.connect(self._schedule_edited)
        self.zone.zone_changed.connect(self._schedule_edited)
        self.name.textChanged.connect(self._name_edited)
        self.action.changed.connect(self._edited)
        self.action.changed.connect(self._action_edited)
        self.policies.changed.connect(self._policies_edited)
        self.conditions.changed.connect(self._policies_edited)
        self.alerts.changed.connect(self._policies_edited)
        self.monitoring.changed.connect(self._policies_edited)
        self.notes.changed.connect(self._edited)
        self.schedule.once.toggled.connect(self._edited)
        self.schedule.once_at.dateTimeChanged.connect(self._edited)

    def _fit_screen(self, content: QWidget) -> None:
        """As big as the form wants, within the screen: the rest scrolls."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() * 0.92
        bar = self.form_area.verticalScrollBar().sizeHint().width()
        wanted = content.sizeHint() + QSize(bar, 0)
        chrome = self.sizeHint() - self.form_area.sizeHint()  # margins, status line and buttons
        self.resize(
            max(MIN_SIZE.width(), min(wanted.width() + chrome.width(), room.width())),
            max(MIN_SIZE.height(), min(wanted.height() + chrome.height(), room.height())),
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Two columns side by side when they fit, else one above the other (and it scrolls).
        wide = self.form_area.viewport().width() >= self._wide
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._columns.direction() != direction:
            self._columns.setDirection(direction)

    # -- language and colours ------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            self.schedule.show_expression()
            self.refresh_preview()
            self._update()

    def retranslate(self) -> None:
        """Every text again in the current language (the language was changed while open)."""
        self.texts.retranslate()
        self._retitle()
        self.zone.retranslate()
        self.action.retranslate()
        self.policies.update_help()
        self.conditions.update_help()
        self.sleep.retranslate()
        self.schedule.show_expression()
        self.refresh_preview()
        self._update()
        # The button box renames its standard buttons after this, from Qt's own catalog.
        QTimer.singleShot(0, self._name_buttons)

    def _name_buttons(self) -> None:
        if not qt_catalog_loaded():
            self.save_button.setText(tr("Save"))
            self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("Cancel"))

    def _retitle(self) -> None:
        text, values = self._title
        self.setWindowTitle(tr(text, **values))

    # -- loading -------------------------------------------------------------------------------

    def _load(self, schedule: Json) -> None:
        self._title = ("Edit “{name}”", {"name": schedule["name"]})
        self._name_touched = True
        self.name.setText(schedule["name"])
        self.cron.setPlainText(schedule["expr"])
        self.zone.set_zone(schedule["tz"])
        skipping = schedule.get("skipping")
        self.preview.skipping = None if skipping is None else datetime.fromisoformat(skipping)
        if schedule.get("once_at"):
            self.schedule.load_once(wall_time(schedule["once_at"], schedule["tz"]))
        self.action.load(schedule["action"])
        self.policies.load(schedule["policies"])
        loaded = self.action.loaded_timeout
        # A request timeout of its own (an older schedule, an import) shown in the one field.
        if loaded not in (None, HTTP_TIMEOUT) and not schedule["policies"]["timeout"]:
            self.policies.timeout.setValue(max(1, round(loaded or 0)))
        self.policies.set_http(self.action.is_http())
        self.conditions.load(schedule["policies"])
        self.alerts.load(schedule["policies"])
        self.monitoring.load(schedule["policies"])
        self.notes.load(schedule["notes"])

    # -- reacting to edits ---------------------------------------------------------------------

    def _name_edited(self) -> None:
        self._name_touched = True
        self._edited()

    def _edited(self) -> None:
        self._save_error = None
        self._update()

    def _action_edited(self) -> None:
        # A bound method, not a lambda: a lambda holding the dialog would keep it alive.
        self.policies.set_http(self.action.is_http())

    def _policies_edited(self) -> None:
        self._save_error = None
        self._update(simulate=True)

    def _schedule_edited(self) -> None:
        self._save_error = None
        self.schedule.show_expression()
        self.schedule.show_choices()
        self.refresh_preview()
        self._update(simulate=True)

    def refresh_preview(self) -> None:
        """Show the next fires after ``now()`` for the expression and zone as edited."""
        try:
            expr = parse(self.cron.text())
        except CronError:
            expr = None
        label = self.zone.currentText().strip()
        self.preview.show_fires(expr, self.zone.zone(), label, self._now())

    def _update(self, *, simulate: bool = False) -> None:
        form = self._collect()
        kind = form.request["action"]["kind"]
        # The conditions' default need of the network, and so the sleep panel, follow the kind.
        simulate = simulate or kind != self.conditions.action_kind
        self.conditions.set_action_kind(kind)
        self.conditions.set_expression(self.cron.text())
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
        self.status.setStyleSheet(css_color(colors().error) if failed else "")
        self.save_button.setEnabled(not form.problems)
        self.save_button.setToolTip(first)
        if simulate:
            schedule_ok = not {"expr", "tz"} & form.problems.keys()
            self.sleep.show_for(
                form.request["expr"] if schedule_ok else None,
                form.request["tz"] if schedule_ok else None,
                form.policies,
                self._now(),
                kind,
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
        expr, once = self.cron.text(), self.schedule.once_text()
        try:
            parse(expr)
        except CronError as error:
            if once is None:  # a one-off's expression is made from its time when saved
                problems["expr"] = error.message
        tz = self.zone.zone()
        if tz is None:
            typed = self.zone.currentText().strip()
            problems["tz"] = tr("Unknown time zone “{zone}”: pick one from the list.", zone=typed)
        action, action_problem = self.action.action_json()
        if self.action.is_http():
            # One timeout for an HTTP job: the Policies box's, else the request's default.
            action["timeout"] = float(self.policies.timeout.value() or HTTP_TIMEOUT)
        if action_problem is None:
            try:
                parse_action(action)
            except ParamError as error:
                action_problem = _param_message(error)
        if action_problem is not None:
            problems["action"] = action_problem
        policies: Policies | None = None
        policies_request = self.policies.policies_json()
        policies_request["conditions"] = self.conditions.conditions_json()
        policies_request["session"] = self.conditions.session_json()
        alerts = self.alerts.alerts_json()
        if alerts is not None:
            policies_request["alerts"] = alerts
        policies_request["monitor"] = self.monitoring.monitor_json()
        try:
            policies = parse_policies(policies_request)
        except ParamError as error:
            problems["policies"] = _param_message(error)
        notes_problem = self.notes.problem()
        if notes_problem is not None:
            problems["notes"] = notes_problem
        if self._save_error is not None:
            field, message = self._save_error
            problems.setdefault(field, message)
        request: Json = {
            "name": name,
            "expr": expr,
            "tz": tz,
            "action": action,
            "policies": policies_request,
            "notes": self.notes.notes(),
        }
        if once is not None or self.schedule.was_once:
            request["at"] = once  # None: no longer a one-off
        if self._schedule_id is not None:
            request["id"] = self._schedule_id
        return _Form(request=request, problems=problems, policies=policies)

    def has_edits(self) -> bool:
        """Whether saving now would change anything (compared with the dialog as it opened)."""
        return bool(self._collect().request != self._initial)

    def reject(self) -> None:
        # Escape, Cancel and the window's close button all come here.
        if self.has_edits() and not self._confirm_discard(self):
            return
        super().reject()

    def _save(self) -> None:
        form = self._collect()
        if form.problems:
            return
        try:
            if form.request.get("at") == self._initial.get("at"):
                form = replace(form, request=without_at(form.request))  # unchanged: kept as is
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
        "New schedule": "新建计划",
        "Save": "保存",
        "Cancel": "取消",
        "Unsaved changes": "未保存的更改",
        "Discard the changes to this schedule?": "放弃对这个计划的更改？",
        "Discard changes": "放弃更改",
        "Keep editing": "继续编辑",
        "Name": "名称",
        "Edit “{name}”": "编辑“{name}”",
        "A name is required.": "必须填写名称。",
        "The name is too long (at most {count} characters).": "名称太长（最多 {count} 个字符）。",
        "Unknown time zone “{zone}”: pick one from the list.": "未知时区“{zone}”：请从列表中选择。",
        "Could not save: {error}": "无法保存：{error}",
    },
)
