"""The editor's Conditions box: what must hold of the machine before a due run starts (network,
an unmetered connection, the charger, a battery level, a disk, a network's name, a path), how
long to wait for it, the session's moments that run it too, and a sentence under it saying all
of that in words, as the service's ``policies.conditions`` and ``policies.session`` JSON."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QSpinBox

from domi_desktop.cron import describe, parse
from domi_desktop.errors import CronError, ParamError
from domi_desktop.frontdoor.triggers import parse_session
from domi_desktop.frontdoor.wire import Json, parse_conditions
from domi_desktop.model import Conditions, OnDeadline, SessionTriggers
from domi_desktop.ui.condition_words import conditions_words, sentences_words, session_words
from domi_desktop.ui.editor.away import AwayRows
from domi_desktop.ui.editor.resources import ResourceRows
from domi_desktop.ui.editor.widgets import help_label, row
from domi_desktop.ui.i18n import Texts, cron_language, register

NETWORK = (
    (None, "As the action needs (HTTP: yes)"),
    (True, "Yes"),
    (False, "No"),
)
ON_DEADLINE = (
    (OnDeadline.run, "then run anyway"),
    (OnDeadline.skip, "then skip the run"),
)
DAY = 86400


class ConditionsBox(QGroupBox):
    """The schedule's conditions; ``changed`` on every edit, the sentence follows live."""

    changed = Signal()

    def __init__(self, texts: Texts) -> None:
        super().__init__()
        t = texts
        self._action_kind = "command"
        self._expr = ""
        t.bind(self.setTitle, "Conditions")
        self.network = QComboBox()
        self.network.setObjectName("requiresNetwork")
        for index, (value, label) in enumerate(NETWORK):
            self.network.addItem("", value)
            t.bind(partial(self.network.setItemText, index), label)
        t.bind(self.network.setAccessibleName, "Requires network")
        self.unmetered = self._check(t, "unmeteredOnly", "Unmetered connection only")
        self.metered_after = QSpinBox()
        self.metered_after.setObjectName("meteredAfter")
        self.metered_after.setRange(0, 365)
        t.bind(self.metered_after.setPrefix, "metered allowed after ")
        t.bind(self.metered_after.setSuffix, " days")
        t.bind(self.metered_after.setSpecialValueText, "metered never allowed")
        t.bind(
            self.metered_after.setToolTip,
            "After this many days without a successful run, a metered connection will do.",
        )
        self.on_ac = self._check(t, "onAcPower", "Only on AC power")
        self.min_battery = QSpinBox()
        self.min_battery.setObjectName("minBattery")
        self.min_battery.setRange(0, 100)
        t.bind(self.min_battery.setSuffix, " %")
        t.bind(self.min_battery.setSpecialValueText, "Any charge")
        t.bind(self.min_battery.setToolTip, "On battery, wait while the charge is below this.")
        self.wait_hours = QSpinBox()
        self.wait_hours.setObjectName("waitHours")
        self.wait_hours.setRange(0, 24 * 365)
        t.bind(self.wait_hours.setSuffix, " h")
        self.wait_minutes = QSpinBox()
        self.wait_minutes.setObjectName("waitMinutes")
        self.wait_minutes.setRange(0, 59)
        t.bind(self.wait_minutes.setSuffix, " min")
        t.bind(self.wait_hours.setToolTip, "0 h 0 min: wait as long as it takes.")
        self.on_deadline = QComboBox()
        self.on_deadline.setObjectName("onDeadline")
        for index, (member, label) in enumerate(ON_DEADLINE):
            self.on_deadline.addItem("", member.value)
            t.bind(partial(self.on_deadline.setItemText, index), label)
        t.bind(self.on_deadline.setAccessibleName, "At the deadline")
        self.stop_if_lost = self._check(t, "stopIfLost", "Stop if a condition is lost")
        t.bind(
            self.stop_if_lost.setToolTip,
            "Stop the job when a condition that held at its start goes away; "
            "run it again once it returns.",
        )
        self.keep_awake = self._check(t, "keepAwake", "Keep the computer awake while it runs")
        self.resources = ResourceRows(t)
        self.away = AwayRows(t)
        self.sentence = help_label()
        self.sentence.setObjectName("conditionsSentence")

        form = QFormLayout(self)
        form.addRow(t.label("Requires network"), self.network)
        form.addRow(self.unmetered, self.metered_after)
        form.addRow(self.on_ac)
        form.addRow(t.label("Minimum battery"), self.min_battery)
        form.addRow(
            t.label("Wait at most"),
            row(self.wait_hours, self.wait_minutes, self.on_deadline, stretch=1),
        )
        form.addRow(self.stop_if_lost)
        form.addRow(self.keep_awake)
        self.resources.add_to(form)
        self.away.add_to(form)
        form.addRow(self.sentence)

        for combo in (self.network, self.on_deadline):
            combo.currentIndexChanged.connect(self.changed)
        for spin in (self.metered_after, self.min_battery, self.wait_hours, self.wait_minutes):
            spin.valueChanged.connect(self.changed)
        for box in (self.unmetered, self.on_ac, self.stop_if_lost, self.keep_awake):
            box.toggled.connect(self.changed)
        self.resources.connect(self.changed.emit)
        self.away.connect(self.changed.emit)
        self.changed.connect(self.update_help)
        self.update_help()

    @staticmethod
    def _check(texts: Texts, name: str, label: str) -> QCheckBox:
        box = QCheckBox()
        box.setObjectName(name)
        texts.bind(box.setText, label)
        return box

    @property
    def action_kind(self) -> str:
        return self._action_kind

    def set_action_kind(self, kind: str) -> None:
        """The default of "requires network" follows the action's kind; the sentence says so."""
        if kind != self._action_kind:
            self._action_kind = kind
            self.update_help()

    def set_expression(self, expr: str) -> None:
        """The sentence starts with the schedule's time in words when it waits for a disk, a
        network's name or a path."""
        if expr != self._expr:
            self._expr = expr
            self.update_help()

    def _when(self) -> str | None:
        try:
            return describe(parse(self._expr), cron_language())
        except CronError:
            return None

    def _wait(self) -> int:
        return self.wait_hours.value() * 3600 + self.wait_minutes.value() * 60

    def update_help(self) -> None:
        """The sentence says what the boxes mean; fields that mean nothing now grey out."""
        self.metered_after.setEnabled(self.unmetered.isChecked())
        self.min_battery.setEnabled(not self.on_ac.isChecked())
        self.on_deadline.setEnabled(self._wait() > 0)
        self.resources.update()
        self.away.update()
        conditions, session = self.conditions(), self.session()
        if conditions is not None and session is not None:
            text = conditions_words(conditions, self._action_kind, self._when())
            moments = session_words(session)
            self.sentence.setText(sentences_words([text, moments]) if moments else text)

    def load(self, policies: Json) -> None:
        """Fill the boxes from a schedule's policies JSON (no ``conditions``: the defaults)."""
        c = parse_conditions(policies.get("conditions"))
        self.network.setCurrentIndex(self.network.findData(c.requires_network))
        self.unmetered.setChecked(c.unmetered_only)
        metered_after = c.metered_after.total_seconds() if c.metered_after else 0
        self.metered_after.setValue(round(metered_after / DAY))
        self.on_ac.setChecked(c.on_ac_power)
        self.min_battery.setValue(c.min_battery_percent or 0)
        minutes = round(c.wait_at_most.total_seconds() / 60) if c.wait_at_most else 0
        self.wait_hours.setValue(minutes // 60)
        self.wait_minutes.setValue(minutes % 60)
        self.on_deadline.setCurrentIndex(self.on_deadline.findData(c.on_deadline.value))
        self.stop_if_lost.setChecked(c.stop_if_lost)
        self.keep_awake.setChecked(c.keep_awake)
        self.resources.load(policies)
        self.away.load(policies)

    def conditions_json(self) -> Json:
        """Every field, always: saving with all boxes cleared must clear stored conditions."""
        unmetered = self.unmetered.isChecked()
        days = self.metered_after.value()
        on_ac = self.on_ac.isChecked()
        return {
            "requires_network": self.network.currentData(),
            "unmetered_only": unmetered,
            "metered_after": days * DAY if unmetered and days else None,
            "on_ac_power": on_ac,
            "min_battery_percent": None if on_ac else self.min_battery.value() or None,
            "wait_at_most": self._wait() or None,
            # Without a wait there is no deadline: the default keeps "no conditions" equal to none.
            "on_deadline": self.on_deadline.currentData() if self._wait() else "run",
            "stop_if_lost": self.stop_if_lost.isChecked(),
            "keep_awake": self.keep_awake.isChecked(),
            **self.resources.conditions_json(),
            **self.away.conditions_json(),
        }

    def session_json(self) -> Json:
        return self.resources.session_json()

    def session(self) -> SessionTriggers | None:
        try:
            return parse_session(self.session_json(), SessionTriggers())
        except ParamError:
            return None

    def conditions(self) -> Conditions | None:
        """The boxes as the service will read them; ``None`` if it would refuse them."""
        try:
            return parse_conditions(self.conditions_json())
        except ParamError:
            return None


register(
    "zh",
    {
        "Conditions": "运行条件",
        "As the action needs (HTTP: yes)": "按动作类型（HTTP：需要）",
        "Yes": "需要",
        "No": "不需要",
        "Requires network": "需要网络",
        "Unmetered connection only": "仅限不计流量的网络",
        "metered allowed after ": "以下天数后允许计流量网络：",
        " days": " 天",
        "metered never allowed": "从不允许计流量网络",
        "After this many days without a successful run, a metered connection will do.": (
            "连续这么多天没有成功运行后，也可以使用计流量的网络。"
        ),
        "Only on AC power": "仅在接通电源时",
        " %": " %",
        "Any charge": "任意电量",
        "On battery, wait while the charge is below this.": "使用电池时，电量低于此值就等待。",
        "Minimum battery": "最低电量",
        " h": " 小时",
        " min": " 分钟",
        "0 h 0 min: wait as long as it takes.": "0 小时 0 分钟：一直等待，直到条件满足。",
        "then run anyway": "然后照常运行",
        "then skip the run": "然后跳过这次运行",
        "At the deadline": "到达等待时限时",
        "Wait at most": "最多等待",
        "Stop if a condition is lost": "条件不再满足时停止",
        "Stop the job when a condition that held at its start goes away; "
        "run it again once it returns.": "启动时满足的条件消失后停止任务；条件恢复后再运行一次。",
        "Keep the computer awake while it runs": "运行期间保持电脑唤醒",
    },
)
