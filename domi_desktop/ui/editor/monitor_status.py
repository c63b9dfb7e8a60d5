"""The Monitoring box's live part: each check of the saved schedule as the engine last saw it (its
page, state, last ping, last error), "Send a test ping" with its outcome, and the way to the
machine heartbeat in Settings. Everything is asked of the engine and answered later on this
thread: the GUI makes no request of a monitor itself."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime
from typing import Protocol, runtime_checkable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from domi_desktop.monitor.status import CheckState, CheckStatus, PingKind, PingTrial
from domi_desktop.ui.editor.widgets import help_label
from domi_desktop.ui.i18n import Texts, format_moment, register, tr

REFRESH_MS = 5000
"""How often an open editor asks the engine again: pings go out while it is open."""


@runtime_checkable
class MonitorQueries(Protocol):
    """What the box asks of the engine (``app.engine.EngineHandle``); each answer comes later,
    on the GUI thread."""

    def monitor_status(
        self, schedule_id: int, done: Callable[[tuple[CheckStatus, ...]], None]
    ) -> None: ...

    def test_ping(self, schedule_id: int, done: Callable[[PingTrial], None]) -> None: ...


_STATES = {
    CheckState.new: "new (no ping yet)",
    CheckState.up: "up",
    CheckState.down: "down",
    CheckState.paused: "paused",
    CheckState.started: "up, a run in progress",
    CheckState.grace: "late (in its grace time)",
    CheckState.unknown: "not seen since the app started",
}
_KINDS = {
    PingKind.start: "start",
    PingKind.success: "success",
    PingKind.failure: "failure",
    PingKind.log: "log",
    PingKind.pause: "pause (going to sleep)",
    PingKind.test: "test ping",
}


def _when(moment: datetime) -> str:
    return format_moment(moment.astimezone())


def describe(status: CheckStatus) -> str:
    """One check as rich text: its page, its state, its last ping, its last error."""
    lines = []
    if status.url is None:
        lines.append(
            html.escape(tr("{target}: its page is known once it is made", target=status.target))
        )
    else:
        link = html.escape(status.url)
        lines.append(f'{html.escape(status.target)}: <a href="{link}">{link}</a>')
    if status.target != "webhook":
        lines.append(html.escape(tr("Last known state: {state}", state=tr(_STATES[status.state]))))
    if status.last_ping_at is None or status.last_ping_kind is None:
        lines.append(html.escape(tr("Last ping: none since the app started")))
    else:
        lines.append(html.escape(tr("Last ping: {when}, {kind}", when=_when(status.last_ping_at),
                                    kind=tr(_KINDS[status.last_ping_kind]))))  # fmt: skip
    if status.waiting:
        lines.append(html.escape(tr("Waiting to be sent: {count}", count=status.waiting)))
    if status.last_error is not None:
        error = html.escape(tr("Last error: {why}", why=status.last_error))
        lines.append(f'<span style="color:#b3261e">{error}</span>')
    return "<br>".join(lines)


def describe_test(result: PingTrial) -> str:
    when = result.sent_at.astimezone().strftime("%H:%M")
    if result.error is not None:
        return tr("Test ping at {when} failed: {error}", when=when, error=result.error)
    answer = "?" if result.status is None else str(result.status)
    return tr("Test ping sent {when}, answered {status}", when=when, status=answer)


class MonitorStatusPanel(QWidget):
    """Inert (a sentence saying so) until ``attach`` gives it the engine and a saved schedule."""

    def __init__(self, texts: Texts) -> None:
        super().__init__()
        self._queries: MonitorQueries | None = None
        self._schedule_id: int | None = None
        self._saved = True
        self.checks = QLabel()
        self.checks.setObjectName("monitorChecks")
        self.checks.setWordWrap(True)
        self.checks.setOpenExternalLinks(True)
        self.test = QPushButton()
        self.test.setObjectName("testPing")
        texts.bind(self.test.setText, "Send a test ping")
        self.test.clicked.connect(self.send_test)
        self.result = help_label()
        self.result.setObjectName("testPingResult")
        self.heartbeat = QPushButton()
        self.heartbeat.setObjectName("openHeartbeat")
        self.heartbeat.setFlat(True)
        texts.bind(self.heartbeat.setText, "Machine heartbeat…")
        texts.bind(self.heartbeat.setToolTip, "This computer's own check, in Settings.")
        self.heartbeat.hide()
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.test)
        buttons.addWidget(self.result, 1)
        buttons.addWidget(self.heartbeat)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.checks)
        layout.addLayout(buttons)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._has_checks = False
        self._alive = [True]
        """Emptied once the widget is gone: an answer that comes later is dropped."""
        alive = self._alive
        self.destroyed.connect(lambda *_: alive.clear())
        self._show_idle()

    def attach(
        self,
        queries: MonitorQueries,
        schedule_id: int | None,
        open_heartbeat: Callable[[], object] | None = None,
    ) -> None:
        self._queries = queries
        self._schedule_id = schedule_id
        if open_heartbeat is not None:
            self.heartbeat.clicked.connect(open_heartbeat)
            self.heartbeat.show()
        self.refresh()
        self._timer.start()

    def set_saved(self, saved: bool) -> None:
        """False while the box's fields differ from the saved schedule: a test uses the saved."""
        self._saved = saved
        self._enable()

    def refresh(self) -> None:
        if self._queries is None or self._schedule_id is None:
            return
        alive = self._alive
        self._queries.monitor_status(
            self._schedule_id, lambda found: self.show_status(found) if alive else None
        )

    def show_status(self, found: tuple[CheckStatus, ...]) -> None:
        self._has_checks = any(s.target != "webhook" for s in found)
        if found:
            self.checks.setText("<br><br>".join(describe(s) for s in found))
        else:
            self._show_idle()
        self._enable()

    def send_test(self) -> None:
        if self._queries is None or self._schedule_id is None:
            return
        self.test.setEnabled(False)
        self.result.setText(tr("Sending…"))
        alive = self._alive
        self._queries.test_ping(
            self._schedule_id, lambda result: self.show_test(result) if alive else None
        )

    def show_test(self, result: PingTrial) -> None:
        self.result.setText(describe_test(result))
        self.result.setProperty("failed", not result.ok)
        self.result.setStyleSheet("" if result.ok else "color: #b3261e")
        self._enable()
        self.refresh()

    def _show_idle(self) -> None:
        if self._schedule_id is None:
            self.checks.setText(tr("Each check's state shows here once the schedule is saved."))
        else:
            self.checks.setText(tr("No monitor is saved for this schedule."))

    def _enable(self) -> None:
        ready = self._queries is not None and self._schedule_id is not None and self._has_checks
        self.test.setEnabled(ready and self._saved)
        self.test.setToolTip(
            tr("A log entry in the check's events; its state does not change.")
            if self._saved
            else tr("Save first: the test uses the saved schedule.")
        )


register(
    "zh",
    {
        "new (no ping yet)": "新建（尚无 ping）",
        "up": "正常",
        "down": "失败",
        "paused": "已暂停",
        "up, a run in progress": "正常，运行中",
        "late (in its grace time)": "迟到（宽限期内）",
        "not seen since the app started": "应用启动后尚未获知",
        "start": "开始",
        "success": "成功",
        "failure": "失败",
        "log": "日志",
        "pause (going to sleep)": "暂停（进入睡眠）",
        "test ping": "测试 ping",
        "{target}: its page is known once it is made": "{target}：创建后即显示其页面",
        "Last known state: {state}": "最近已知状态：{state}",
        "Last ping: none since the app started": "最近 ping：应用启动后尚无",
        "Last ping: {when}, {kind}": "最近 ping：{when}，{kind}",
        "Waiting to be sent: {count}": "待发送：{count}",
        "Last error: {why}": "最近错误：{why}",
        "Test ping at {when} failed: {error}": "{when} 的测试 ping 失败：{error}",
        "Test ping sent {when}, answered {status}": "测试 ping 已于 {when} 发送，应答 {status}",
        "Send a test ping": "发送测试 ping",
        "Machine heartbeat…": "本机心跳…",
        "This computer's own check, in Settings.": "这台电脑自己的检查，在设置中。",
        "Sending…": "正在发送…",
        "Each check's state shows here once the schedule is saved.": "保存计划后，这里显示每个检查的状态。",
        "No monitor is saved for this schedule.": "此计划尚未保存任何监控。",
        "A log entry in the check's events; its state does not change.": (
            "在检查的事件中记一条日志；其状态不变。"
        ),
        "Save first: the test uses the saved schedule.": "请先保存：测试使用已保存的计划。",
    },
)
