"""The Settings dialog's Machine heartbeat box: a Healthchecks check for this machine itself,
never paused, that says when the laptop has been silent too long (lost, dead, never woken)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QFormLayout, QGroupBox, QLineEdit, QSpinBox

from domi_desktop.frontdoor.settings import AppSettings
from domi_desktop.ui.i18n import Texts, register

MAX_HOURS = 24 * 365


class HeartbeatBox(QGroupBox):
    def __init__(self, texts: Texts) -> None:
        super().__init__()
        t = texts
        t.bind(self.setTitle, "Machine heartbeat (Healthchecks)")
        self.key = QLineEdit()
        self.key.setObjectName("heartbeatKey")
        t.bind(
            self.key.setToolTip,
            "The secret holding a Healthchecks project API key: domi makes this machine's check.",
        )
        self.api = QLineEdit()
        self.api.setObjectName("heartbeatApi")
        t.bind(self.api.setToolTip, "A self-hosted Healthchecks; empty: healthchecks.io.")
        self.url = QLineEdit()
        self.url.setObjectName("heartbeatUrl")
        t.bind(self.url.setToolTip, "Or the ping URL of a check you made for this machine.")
        self.hours = QSpinBox()
        self.hours.setObjectName("heartbeatHours")
        self.hours.setRange(1, MAX_HOURS)
        t.bind(self.hours.setSuffix, " h")
        t.bind(self.hours.setToolTip, "Silent this long, the machine's check goes down.")
        form = QFormLayout(self)
        form.addRow(t.label("API key (secret):"), self.key)
        form.addRow(t.label("Self-hosted at:"), self.api)
        form.addRow(t.label("or ping URL:"), self.url)
        form.addRow(t.label("Down after:"), self.hours)

    def show_settings(self, settings: AppSettings) -> None:
        self.key.setText(settings.healthchecks_key)
        self.api.setText(settings.healthchecks_api)
        self.url.setText(settings.heartbeat_url)
        self.hours.setValue(settings.heartbeat_hours)

    def values(self) -> dict[str, Any]:
        """The ``AppSettings`` fields this box edits."""
        return {
            "healthchecks_key": self.key.text().strip(),
            "healthchecks_api": self.api.text().strip(),
            "heartbeat_url": self.url.text().strip(),
            "heartbeat_hours": self.hours.value(),
        }


register(
    "zh",
    {
        "Machine heartbeat (Healthchecks)": "本机心跳（Healthchecks）",
        "The secret holding a Healthchecks project API key: domi makes this machine's check.": (
            "保存 Healthchecks 项目 API 密钥的机密：domi 为本机创建检查。"
        ),
        "A self-hosted Healthchecks; empty: healthchecks.io.": (
            "自建的 Healthchecks；留空即 healthchecks.io。"
        ),
        "Or the ping URL of a check you made for this machine.": "或你为本机创建的检查的 ping 地址。",
        " h": " 小时",
        "Silent this long, the machine's check goes down.": "沉默这么久后，本机的检查判定为失败。",
        "API key (secret):": "API 密钥（机密）：",
        "Self-hosted at:": "自建地址：",
        "or ping URL:": "或 ping 地址：",
        "Down after:": "失败判定时长：",
    },
)
