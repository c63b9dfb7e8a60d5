"""The editor's Alerts box: when a schedule's failures become notifications (a reminder every N
failures or once a day), pausing it after N failures in a row, and a warning when nothing has
succeeded for a while, as the service's ``policies.alerts`` JSON (null: the app's defaults)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QSpinBox

from domi_desktop.frontdoor.wire import Json, parse_alerts
from domi_desktop.model import Alerts
from domi_desktop.ui.i18n import Texts, register

HOUR = 3600
MAX_COUNT = 1000
MAX_HOURS = 24 * 365


class AlertsBox(QGroupBox):
    """The schedule's alert settings; ``changed`` on every edit."""

    changed = Signal()

    def __init__(self, texts: Texts) -> None:
        super().__init__()
        t = texts
        t.bind(self.setTitle, "Alerts")
        self._own = False
        """Whether the schedule has alerts of its own (else it follows the app's defaults)."""
        self.auto_pause = self._spin(t, "autoPauseAfter", MAX_COUNT, " failures in a row")
        t.bind(self.auto_pause.setToolTip, "Pause the schedule after this many failures in a row.")
        self.notify_every = self._spin(t, "notifyEvery", MAX_COUNT, " failures")
        t.bind(
            self.notify_every.setToolTip,
            "While it keeps failing the same way, remind me every this many failures.",
        )
        self.cooldown = self._spin(t, "cooldown", MAX_HOURS, " h")
        t.bind(
            self.cooldown.setToolTip,
            "While it keeps failing the same way, remind me once this long has passed.",
        )
        self.stale_after = self._spin(t, "staleAfter", MAX_HOURS, " h")
        t.bind(self.stale_after.setToolTip, "Warn me when no run has succeeded for this long.")
        self.recovery = QCheckBox()
        self.recovery.setObjectName("notifyRecovery")
        t.bind(self.recovery.setText, "Tell me when it works again")

        form = QFormLayout(self)
        form.addRow(t.label("Pause after"), self.auto_pause)
        form.addRow(t.label("Remind every"), self.notify_every)
        form.addRow(t.label("Remind after"), self.cooldown)
        form.addRow(t.label("Warn when no success for"), self.stale_after)
        form.addRow(self.recovery)
        self._show(Alerts())
        for spin in (self.auto_pause, self.notify_every, self.cooldown, self.stale_after):
            spin.valueChanged.connect(self.changed)
        self.recovery.toggled.connect(self.changed)

    @staticmethod
    def _spin(texts: Texts, name: str, maximum: int, suffix: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setObjectName(name)
        spin.setRange(0, maximum)
        texts.bind(spin.setSuffix, suffix)
        texts.bind(spin.setSpecialValueText, "Never")  # shown at the minimum, 0
        return spin

    def _show(self, alerts: Alerts) -> None:
        self.auto_pause.setValue(alerts.auto_pause_after or 0)
        self.notify_every.setValue(alerts.notify_every or 0)
        for spin, span in (
            (self.cooldown, alerts.cooldown),
            (self.stale_after, alerts.stale_after),
        ):
            spin.setValue(round(span.total_seconds() / HOUR) if span else 0)
        self.recovery.setChecked(alerts.notify_recovery)

    def load(self, policies: Json) -> None:
        """Fill the boxes from a schedule's policies JSON (no ``alerts``: the defaults)."""
        own = parse_alerts(policies.get("alerts"))
        self._own = own is not None
        self._show(own or Alerts())

    def alerts_json(self) -> Json | None:
        """The boxes as ``policies.alerts``; None (the app's defaults) while a schedule without
        alerts of its own still shows them."""
        shown: Json = {
            "auto_pause_after": self.auto_pause.value() or None,
            "notify_every": self.notify_every.value() or None,
            "cooldown": self.cooldown.value() * HOUR or None,
            "stale_after": self.stale_after.value() * HOUR or None,
            "notify_recovery": self.recovery.isChecked(),
        }
        if not self._own and shown == _DEFAULTS:
            return None
        return shown


_DEFAULTS: Json = {
    "auto_pause_after": None,
    "notify_every": None,
    "cooldown": 24 * HOUR,
    "stale_after": None,
    "notify_recovery": True,
}
"""``Alerts()`` as the boxes write it."""


register(
    "zh",
    {
        "Alerts": "提醒",
        " failures in a row": " 次连续失败",
        " failures": " 次失败",
        "Never": "从不",
        "Pause the schedule after this many failures in a row.": "连续失败这么多次后暂停该计划。",
        "While it keeps failing the same way, remind me every this many failures.": (
            "持续以同样方式失败时，每失败这么多次提醒一次。"
        ),
        "While it keeps failing the same way, remind me once this long has passed.": (
            "持续以同样方式失败时，过了这么久再提醒一次。"
        ),
        "Warn me when no run has succeeded for this long.": "这么长时间没有成功运行时提醒我。",
        "Tell me when it works again": "恢复正常时告诉我",
        "Pause after": "暂停于",
        "Remind every": "每隔提醒",
        "Remind after": "再次提醒间隔",
        "Warn when no success for": "无成功运行提醒",
    },
)
