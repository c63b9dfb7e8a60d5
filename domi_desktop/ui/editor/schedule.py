"""The editor's Schedule box: the name, the expression (typed, a preset, or a time of day) with
its error underlined or its description, and the zone."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from PySide6.QtCore import QDateTime, QTime
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QTimeEdit,
)

from domi_desktop.cron import CronError, describe, parse, zone_for
from domi_desktop.frontdoor.wire import MAX_NAME, Json
from domi_desktop.ui.editor.widgets import (
    CronEdit,
    ErrorLabel,
    ZonePicker,
    row,
    stacked,
    time_of,
    with_time,
)
from domi_desktop.ui.i18n import Texts, cron_language, register, tr

PRESETS = (
    ("Every minute", "* * * * *"),
    ("Every 5 minutes", "*/5 * * * *"),
    ("Every 15 minutes", "*/15 * * * *"),
    ("Hourly", "0 * * * *"),
    ("Daily at {time}", "0 9 * * *"),
    ("Weekdays at {time}", "0 9 * * 1-5"),
    ("Weekly on Monday at {time}", "0 9 * * 1"),
    ("Monthly on the 1st at {time}", "0 9 1 * *"),
)
"""A preset with a ``{time}`` is stored at 09:00 and stands for its days at any time of day:
``0 3 * * *`` is "Daily at 03:00", not "Custom"."""
PRESET_TIME = (9, 0)


class ScheduleBox(QGroupBox):
    """Name, when, and where; ``errors`` holds the labels under the name, expression and zone."""

    def __init__(self, texts: Texts, errors: dict[str, ErrorLabel]) -> None:
        super().__init__()
        t = texts
        self.name = QLineEdit()
        self.name.setObjectName("name")
        t.bind(self.name.setAccessibleName, "Name")
        t.bind(self.name.setPlaceholderText, "e.g. Rate-limit report for the login endpoint")
        self.name.setMaxLength(MAX_NAME + 50)  # room to show "too long" rather than cut silently

        self.cron = CronEdit()
        self.cron.setObjectName("cron")
        self.cron.setMinimumWidth(self.fontMetrics().horizontalAdvance("M") * 12)
        t.bind(self.cron.setAccessibleName, "Cron expression")
        t.bind(
            self.cron.setToolTip,
            "Five fields: minute, hour, day of month, month, day of week (e.g. 0 9 * * 1-5).",
        )
        self.presets = QComboBox()
        self.presets.setObjectName("presets")
        t.bind(self.presets.setAccessibleName, "Presets")
        # As wide as its longest preset ("Weekly on Monday at 09:00"), at any scale and language.
        self.presets.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._preset_time = PRESET_TIME
        """The time of day the presets are named with: the expression's."""
        for index, (label, expr) in enumerate((("Custom", ""), *PRESETS)):
            self.presets.addItem("", expr)
            t.bind(partial(self._name_preset, index, label), label)
        self.time = QTimeEdit()
        self.time.setObjectName("timePicker")
        self.time.setDisplayFormat("HH:mm")
        t.bind(self.time.setAccessibleName, "Time of day")
        t.bind(self.time.setToolTip, "Run at this time of day (keeps the days of the expression).")
        self.description = QLabel()
        self.description.setObjectName("description")
        self.description.setWordWrap(True)

        self.zone = ZonePicker()
        self.zone.setObjectName("zone")
        t.bind(self.zone.setAccessibleName, "Time zone")
        t.bind(self.zone.setToolTip, "Type any part of a zone name to search, e.g. “york”.")

        t.bind(self.setTitle, "Schedule")
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(t.label("Name"), stacked(self.name, errors["name"]))
        when = stacked(
            row(self.cron, self.presets, self.time),
            errors["expr"],
            self.description,
        )
        form.addRow(t.label("When"), when)
        self.once = QCheckBox()
        self.once.setObjectName("once")
        t.bind(self.once.setText, "Once, at")
        self.once_at = QDateTimeEdit(QDateTime.currentDateTime().addDays(1))
        self.once_at.setObjectName("onceAt")
        self.once_at.setCalendarPopup(True)
        self.once_at.setDisplayFormat("yyyy-MM-dd HH:mm")
        t.bind(self.once_at.setToolTip, "Run once at this date and time (in the time zone below).")
        form.addRow(self.once, self.once_at)
        form.addRow(t.label("Time zone"), stacked(self.zone, errors["tz"]))
        self.once.toggled.connect(self._once_toggled)
        self._once_toggled(False)
        self.was_once = False
        """The schedule loaded is a one-off (unticking makes it a cron schedule again)."""

        self.presets.currentIndexChanged.connect(self._preset_chosen)
        self.time.timeChanged.connect(self._time_chosen)

    def once_text(self) -> str | None:
        """The one-off's wall time (``2026-12-24T07:00``) when "Once, at" is ticked."""
        if not self.once.isChecked():
            return None
        return self.once_at.dateTime().toString("yyyy-MM-ddTHH:mm")

    def load_once(self, wall: str) -> None:
        """Tick "Once, at" and show ``wall`` (``2026-12-24T07:00``, in the schedule's zone)."""
        self.once_at.setDateTime(QDateTime.fromString(wall, "yyyy-MM-ddTHH:mm"))
        self.once.setChecked(True)
        self.was_once = True

    def _once_toggled(self, on: bool) -> None:
        for widget in (self.cron, self.presets, self.time):
            widget.setEnabled(not on)
        self.once_at.setEnabled(on)

    def show_choices(self) -> None:
        """The preset and the time of day that the typed expression matches."""
        expr = self.cron.text().strip()
        at = time_of(expr)
        preset = self.presets.findData(expr)
        if preset < 0 and at is not None:
            preset = self._timed_preset(with_time(expr, *PRESET_TIME))
        if (at or PRESET_TIME) != self._preset_time:
            self._preset_time = at or PRESET_TIME
            for index, (label, _expr) in enumerate(PRESETS, start=1):
                self._name_preset(index, label)
        self.presets.blockSignals(True)  # showing the match is not choosing a preset
        self.presets.setCurrentIndex(max(preset, 0))
        self.presets.blockSignals(False)
        if at is not None:
            self.time.blockSignals(True)  # showing the expression's time is not picking one
            self.time.setTime(QTime(*at))
            self.time.blockSignals(False)

    def show_expression(self) -> None:
        """Underline the error in the expression, or describe it in words."""
        try:
            parsed = parse(self.cron.text())
        except CronError as error:
            self.cron.set_error_span(error.span)
            self.description.hide()
        else:
            self.cron.set_error_span(None)
            self.description.setText(describe(parsed, cron_language()))
            self.description.show()

    def _name_preset(self, index: int, label: str, _translated: str = "") -> None:
        hour, minute = self._preset_time
        self.presets.setItemText(index, tr(label, time=f"{hour:02d}:{minute:02d}"))

    def _timed_preset(self, expr: str) -> int:
        """The index of the preset with a ``{time}`` whose days are those of ``expr``, or -1."""
        for index, (label, preset) in enumerate(PRESETS, start=1):
            if "{time}" in label and preset == expr:
                return index
        return -1

    def _preset_chosen(self, index: int) -> None:
        expr = self.presets.itemData(index)
        if expr and self._timed_preset(expr) == index:
            expr = with_time(expr, *self._preset_time)  # the days change, the time stays
        if expr and expr != self.cron.text().strip():
            self.cron.set_text(expr)

    def _time_chosen(self, time: QTime) -> None:
        expr = with_time(self.cron.text(), time.hour(), time.minute())
        if expr != self.cron.text():
            self.cron.set_text(expr)


def wall_time(instant: str, tz: str) -> str:
    """An ISO instant as the wall time (``2026-12-24T07:00``) of the zone ``tz``."""
    return datetime.fromisoformat(instant).astimezone(zone_for(tz)).strftime("%Y-%m-%dT%H:%M")


def without_at(request: Json) -> Json:
    """The request without its one-off time: saved unchanged, a passed one is not refused."""
    return {key: value for key, value in request.items() if key != "at"}


register(
    "zh",
    {
        "Every minute": "每分钟",
        "Every 5 minutes": "每 5 分钟",
        "Every 15 minutes": "每 15 分钟",
        "Hourly": "每小时",
        "Daily at {time}": "每天 {time}",
        "Weekdays at {time}": "工作日 {time}",
        "Weekly on Monday at {time}": "每周一 {time}",
        "Monthly on the 1st at {time}": "每月 1 日 {time}",
        "e.g. Rate-limit report for the login endpoint": "例如：登录接口限流报告",
        "Cron expression": "Cron 表达式",
        "Five fields: minute, hour, day of month, month, day of week (e.g. 0 9 * * 1-5).": (
            "五个字段：分钟、小时、日、月、星期（例如 0 9 * * 1-5）。"
        ),
        "Presets": "预设",
        "Custom": "自定义",
        "Time of day": "时刻",
        "Run at this time of day (keeps the days of the expression).": (
            "在这个时刻运行（保留表达式中的日期部分）。"
        ),
        "Time zone": "时区",
        "Type any part of a zone name to search, e.g. “york”.": (
            "输入时区名称的任意部分即可搜索，例如“york”。"
        ),
        "Schedule": "计划",
        "When": "时间",
        "Once, at": "仅一次，于",
        "Run once at this date and time (in the time zone below).": (
            "在这个日期和时刻运行一次（按下面的时区）。"
        ),
    },
)
