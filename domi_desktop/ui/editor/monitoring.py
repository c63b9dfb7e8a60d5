"""The editor's Monitoring box: tell Healthchecks of each run (a check's ping URL, or a project API
key kept in the keyring with which domi makes the check itself and pauses it while the machine
sleeps), and a webhook, as the service's ``policies.monitor`` JSON; below the fields, each check
as the engine last saw it, with a test ping (``monitor_status``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLineEdit, QSpinBox

from domi_desktop.frontdoor.monitor_params import MAX_GRACE, MIN_GRACE, parse_monitor
from domi_desktop.frontdoor.wire import Json
from domi_desktop.model import Monitor
from domi_desktop.ui.editor.monitor_status import MonitorQueries, MonitorStatusPanel
from domi_desktop.ui.editor.widgets import help_label
from domi_desktop.ui.i18n import Texts, register

MINUTE = 60


class MonitoringBox(QGroupBox):
    """``changed`` on every edit."""

    changed = Signal()

    def __init__(self, texts: Texts) -> None:
        super().__init__()
        t = texts
        t.bind(self.setTitle, "Monitoring")
        self.ping_url = self._line("healthchecksUrl")
        t.bind(self.ping_url.setToolTip, "The ping URL of a Healthchecks check you made.")
        self.key = self._line("healthchecksKey")
        t.bind(self.key.setPlaceholderText, "secret name")
        t.bind(
            self.key.setToolTip,
            "The secret holding a Healthchecks project API key: domi makes the check from this "
            "schedule and pauses it while the computer sleeps.",
        )
        self.api = self._line("healthchecksApi")
        t.bind(self.api.setToolTip, "A self-hosted Healthchecks; empty: healthchecks.io.")
        self.grace = QSpinBox()
        self.grace.setObjectName("monitorGrace")
        self.grace.setRange(int(MIN_GRACE.total_seconds()) // MINUTE,
                            int(MAX_GRACE.total_seconds()) // MINUTE)  # fmt: skip
        t.bind(self.grace.setSuffix, " min")
        t.bind(self.grace.setToolTip, "How late a ping may come before the check is down.")
        self.webhook = self._line("webhook")
        t.bind(self.webhook.setToolTip, "Gets a JSON POST at each start, success and failure.")
        self.about = help_label()
        self.about.setObjectName("monitorAbout")
        t.bind(
            self.about.setText,
            "Healthchecks tells you when a run did not happen. Give a project API key, kept as a "
            "secret in the OS keyring, and domi makes the check from this schedule (its cron, "
            "zone and grace) and pauses it while the computer sleeps; or paste the ping URL of "
            "a check you made.",
        )
        self.live = MonitorStatusPanel(t)
        self._saved_json: Json | None = None
        form = QFormLayout(self)
        form.addRow(self.about)
        form.addRow(t.label("Healthchecks ping URL"), self.ping_url)
        form.addRow(t.label("or API key (secret)"), self.key)
        form.addRow(t.label("Self-hosted at"), self.api)
        form.addRow(t.label("Grace"), self.grace)
        form.addRow(t.label("Webhook"), self.webhook)
        form.addRow(self.live)
        self._show(Monitor())
        for line in (self.ping_url, self.key, self.api, self.webhook):
            line.textChanged.connect(self.changed)
        self.grace.valueChanged.connect(self.changed)
        self.changed.connect(lambda: self.live.set_saved(self.monitor_json() == self._saved_json))

    def attach(
        self,
        queries: MonitorQueries,
        schedule_id: int | None,
        open_heartbeat: Callable[[], object] | None = None,
    ) -> None:
        """Show the saved schedule's checks as ``queries`` (the engine) sees them."""
        self.live.attach(queries, schedule_id, open_heartbeat)

    @staticmethod
    def _line(name: str) -> QLineEdit:
        line = QLineEdit()
        line.setObjectName(name)
        return line

    def _show(self, monitor: Monitor) -> None:
        self.ping_url.setText(monitor.healthchecks_url or "")
        self.key.setText(monitor.healthchecks_key or "")
        self.api.setText(monitor.healthchecks_api or "")
        self.grace.setValue(round(monitor.grace.total_seconds() / MINUTE))
        self.webhook.setText(monitor.webhook or "")

    def load(self, policies: Json) -> None:
        """Fill the fields from a schedule's policies JSON (no ``monitor``: none)."""
        self._show(parse_monitor(policies.get("monitor"), Monitor()))
        self._saved_json = self.monitor_json()
        self.live.set_saved(True)

    def monitor_json(self) -> Json | None:
        """The fields as ``policies.monitor``; None when nothing is monitored."""
        shown: Json = {
            "healthchecks_url": self.ping_url.text().strip() or None,
            "healthchecks_key": self.key.text().strip() or None,
            "healthchecks_api": self.api.text().strip() or None,
            "webhook": self.webhook.text().strip() or None,
        }
        if not any(shown.values()):
            return None
        return {**shown, "grace": self.grace.value() * MINUTE}


register(
    "zh",
    {
        "Monitoring": "外部监控",
        "Healthchecks tells you when a run did not happen. Give a project API key, kept as a "
        "secret in the OS keyring, and domi makes the check from this schedule (its cron, "
        "zone and grace) and pauses it while the computer sleeps; or paste the ping URL of "
        "a check you made.": (
            "Healthchecks 会在某次运行没有发生时告诉你。填写一个项目 API 密钥（作为机密保存在系统"
            "钥匙串中），domi 就按此计划（其 cron、时区和宽限）创建检查，并在电脑睡眠时暂停它；"
            "也可以粘贴你自己创建的检查的 ping 地址。"
        ),
        "The ping URL of a Healthchecks check you made.": "你在 Healthchecks 中创建的检查的 ping 地址。",
        "The secret holding a Healthchecks project API key: domi makes the check from this "
        "schedule and pauses it while the computer sleeps.": (
            "保存 Healthchecks 项目 API 密钥的机密：domi 按此计划创建检查，并在电脑睡眠时暂停它。"
        ),
        "A self-hosted Healthchecks; empty: healthchecks.io.": (
            "自建的 Healthchecks；留空即 healthchecks.io。"
        ),
        " min": " 分钟",
        "How late a ping may come before the check is down.": "ping 最多可迟到多久才判定检查失败。",
        "Gets a JSON POST at each start, success and failure.": "每次开始、成功和失败时收到一个 JSON POST。",
        "secret name": "机密名称",
        "Healthchecks ping URL": "Healthchecks ping 地址",
        "or API key (secret)": "或 API 密钥（机密）",
        "Self-hosted at": "自建地址",
        "Grace": "宽限",
        "Webhook": "Webhook 回调",
    },
)
