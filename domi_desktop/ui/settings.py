"""The Settings dialog: start at login, which notifications, the default zone, the language.

It edits an ``AppSettings`` and hands the result to the app through ``changed``; only the login
entry is written here, because it belongs to the OS (an XDG file, a LaunchAgent, a registry value)
and its errors must be shown where the user clicked. Saving the file and switching the language
are the app's.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QSignalBlocker, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from domi_desktop.frontdoor.settings import LANGUAGES, AppSettings
from domi_desktop.platform.autostart import AutostartError, default_command
from domi_desktop.ports import Autostart
from domi_desktop.ui.editor.widgets import ZonePicker, error_label
from domi_desktop.ui.heartbeat_box import HeartbeatBox
from domi_desktop.ui.i18n import Texts, register, tr
from domi_desktop.ui.screen_fit import fit_to_screen

register(
    "zh",
    {
        "Settings — domi-desktop": "设置 — domi-desktop",
        "Startup": "启动",
        "Start domi-desktop when I log in": "登录时启动 domi-desktop",
        "Login entry: {where}": "登录项：{where}",
        "Problem with the login entry: {error}": "登录项出现问题：{error}",
        "Notifications": "通知",
        "Notify me about": "通知我",
        "Late runs and catch-ups after sleep": "延迟运行和睡眠后的补运行",
        "Failed runs": "运行失败",
        "Successful runs": "运行成功",
        "Notifications are best effort; the history keeps every run.": (
            "通知尽力送达；运行历史会记录每一次运行。"
        ),
        "New schedules": "新计划",
        "Default time zone:": "默认时区：",
        "Unknown time zone: pick one from the list.": "未知时区：请从列表中选择。",
        "Language": "语言",
        "Language:": "语言：",
    },
)


class SettingsDialog(QDialog):
    """Edits ``settings``; ``changed`` carries the new ``AppSettings`` on OK and on Apply."""

    changed = Signal(object)

    def __init__(
        self, settings: AppSettings, *, autostart: Autostart, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self._autostart = autostart
        self._settings = settings
        """Kept whole: what this dialog does not show (alerts, the catch-up burst) is saved as
        it was, not reset."""
        self._texts = t = Texts()
        t.bind(self.setWindowTitle, "Settings — domi-desktop")

        self.start_at_login = QCheckBox()
        t.bind(self.start_at_login.setText, "Start domi-desktop when I log in")
        self.start_at_login.setObjectName("startAtLogin")
        where = t.label("Login entry: {where}", where=autostart.describe())
        where.setObjectName("loginEntry")
        where.setWordWrap(True)
        where.setEnabled(False)  # the greyed look of secondary text, in every style
        self.autostart_error = error_label("autostartError")

        self.notify_late = QCheckBox()
        t.bind(self.notify_late.setText, "Late runs and catch-ups after sleep")
        self.notify_late.setObjectName("notifyLate")
        self.notify_failures = QCheckBox()
        t.bind(self.notify_failures.setText, "Failed runs")
        self.notify_failures.setObjectName("notifyFailures")
        self.notify_successes = QCheckBox()
        t.bind(self.notify_successes.setText, "Successful runs")
        self.notify_successes.setObjectName("notifySuccesses")
        best_effort = t.label("Notifications are best effort; the history keeps every run.")
        best_effort.setWordWrap(True)
        best_effort.setEnabled(False)

        self.default_zone = ZonePicker()
        self.default_zone.setObjectName("defaultZone")
        self.zone_error = error_label("zoneError")
        t.bind(self.zone_error.setText, "Unknown time zone: pick one from the list.")

        self.language = QComboBox()
        self.language.setObjectName("language")
        # Each language under its own name: someone who cannot read the current one finds theirs.
        for code, name in LANGUAGES.items():
            self.language.addItem(name, code)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.Apply
        )

        startup = QGroupBox()
        t.bind(startup.setTitle, "Startup")
        startup_layout = QVBoxLayout(startup)
        startup_layout.addWidget(self.start_at_login)
        startup_layout.addWidget(where)
        startup_layout.addWidget(self.autostart_error)
        notifications = QGroupBox()
        t.bind(notifications.setTitle, "Notifications")
        notifications_layout = QVBoxLayout(notifications)
        notifications_layout.addWidget(t.label("Notify me about"))
        for box in (self.notify_late, self.notify_failures, self.notify_successes):
            notifications_layout.addWidget(box)
        notifications_layout.addWidget(best_effort)
        schedules = QGroupBox()
        t.bind(schedules.setTitle, "New schedules")
        schedules_layout = QFormLayout(schedules)
        schedules_layout.addRow(t.label("Default time zone:"), self.default_zone)
        schedules_layout.addRow("", self.zone_error)
        language = QGroupBox()
        t.bind(language.setTitle, "Language")
        QFormLayout(language).addRow(t.label("Language:"), self.language)
        self.heartbeat = HeartbeatBox(t)
        # The groups scroll when the screen is short (200 % on 1920x1080 is 540 pixels high);
        # the buttons stay in view.
        self._content = QWidget()
        groups = QVBoxLayout(self._content)
        groups.setContentsMargins(0, 0, 0, 0)
        for group in (startup, notifications, schedules, language, self.heartbeat):
            groups.addWidget(group)
        groups.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setObjectName("settingsScroll")
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(self._content)
        layout = QVBoxLayout(self)
        layout.addWidget(self._scroll, 1)
        layout.addWidget(self.buttons)

        self._show(settings)
        self.default_zone.zone_changed.connect(self._check_zone)
        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        self._check_zone()
        bar = self._scroll.verticalScrollBar().sizeHint().width()
        self.resize(max(520, self._content.sizeHint().width() + bar + 24), 0)
        self._fit_height()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            # Applying a new language re-translates this dialog too, while it is still open.
            self._texts.retranslate()
            self.default_zone.retranslate()
            self._fit_height()

    def apply(self) -> bool:
        """Write the login entry, then emit ``changed``; False if the login entry failed."""
        zone = self.default_zone.zone()
        if zone is None:
            return False
        start_at_login = self._apply_autostart()
        self._settings = replace(
            self._settings,
            start_at_login=start_at_login,
            notify_late=self.notify_late.isChecked(),
            notify_failures=self.notify_failures.isChecked(),
            notify_successes=self.notify_successes.isChecked(),
            default_zone=zone,
            language=self.language.currentData(),
            **self.heartbeat.values(),
        )
        self.changed.emit(self._settings)
        return self.autostart_error.isHidden()

    def _show(self, settings: AppSettings) -> None:
        # The entry on disk is the truth: the user may have removed it by hand since.
        try:
            enabled = self._autostart.is_enabled()
        except AutostartError as error:
            enabled = settings.start_at_login
            self._show_autostart_error(error)
        self.start_at_login.setChecked(enabled)
        self.notify_late.setChecked(settings.notify_late)
        self.notify_failures.setChecked(settings.notify_failures)
        self.notify_successes.setChecked(settings.notify_successes)
        self.default_zone.set_zone(settings.default_zone)
        self.language.setCurrentIndex(max(0, self.language.findData(settings.language)))
        self.heartbeat.show_settings(settings)

    def _apply_autostart(self) -> bool:
        """Make the login entry match the checkbox; return whether it is on afterwards."""
        wanted = self.start_at_login.isChecked()
        try:
            if wanted != self._autostart.is_enabled():
                if wanted:
                    self._autostart.enable(default_command())
                else:
                    self._autostart.disable()
        except AutostartError as error:
            self._show_autostart_error(error)
            # Nothing was changed, so the entry is as it was: the checkbox says so again.
            with QSignalBlocker(self.start_at_login):
                self.start_at_login.setChecked(not wanted)
            return not wanted
        self.autostart_error.hide()
        self._fit_height()
        return wanted

    def _show_autostart_error(self, error: AutostartError) -> None:
        self.autostart_error.setText(tr("Problem with the login entry: {error}", error=error))
        self.autostart_error.show()
        self._fit_height()

    def _check_zone(self) -> None:
        valid = self.default_zone.zone() is not None
        self.zone_error.setVisible(not valid)
        self._fit_height()
        for button in (QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Apply):
            self.buttons.button(button).setEnabled(valid)

    def _fit_height(self) -> None:
        # A top-level window does not grow by itself for wrapped text shown after it was sized
        # (its minimum ignores height-for-width), so the error messages would be cut off.
        inner = self._content.heightForWidth(self._scroll.viewport().width())
        if inner < 0:
            inner = self._content.sizeHint().height()
        chrome = self.sizeHint().height() - self._scroll.sizeHint().height()
        fit_to_screen(self, QSize(self.width(), inner + max(0, chrome)))

    def _ok(self) -> None:
        # A failed login entry keeps the dialog open, so its message is read rather than lost.
        if self.apply():
            self.accept()
