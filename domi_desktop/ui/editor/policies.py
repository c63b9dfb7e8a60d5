"""The editor's Policies box: catch-up after sleep, overlap, the overlap group, timeout, retries,
jitter and waking the computer to run, each with a line saying what it does, as the service's
policies JSON (the wake's line is the sleep panel's: it needs the schedule's times)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QSpinBox,
)

from domi_desktop.frontdoor.wire import MAX_SECONDS, Json
from domi_desktop.model import CatchUp, Overlap
from domi_desktop.ui.editor.waking import WakeWay, this_machine_way, way_words
from domi_desktop.ui.editor.widgets import error_label, help_label, row, stacked
from domi_desktop.ui.i18n import Texts, register, tr

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


class PoliciesBox(QGroupBox):
    """How a schedule behaves around sleep, overlap and failure; ``changed`` on every edit."""

    changed = Signal()

    def __init__(self, texts: Texts) -> None:
        super().__init__()
        t = texts
        t.bind(self.setTitle, "Policies")
        self.catch_up = self._enum_combo(t, "catchUp", CATCH_UP)
        t.bind(self.catch_up.setAccessibleName, "Catch-up")
        self.catch_up_help = help_label()
        self.catch_up_within = QDoubleSpinBox()
        self.catch_up_within.setObjectName("catchUpWithin")
        self.catch_up_within.setRange(0, MAX_SECONDS / 3600)
        self.catch_up_within.setDecimals(1)
        t.bind(self.catch_up_within.setSuffix, " h")
        t.bind(self.catch_up_within.setSpecialValueText, "No limit")
        t.bind(self.catch_up_within.setToolTip, "A missed run older than this is skipped instead.")
        self.overlap = self._enum_combo(t, "overlap", OVERLAP)
        t.bind(self.overlap.setAccessibleName, "If still running")
        self.overlap_help = help_label()
        self.concurrency_key = QLineEdit()
        self.concurrency_key.setObjectName("concurrencyKey")
        t.bind(self.concurrency_key.setPlaceholderText, "This schedule alone")
        t.bind(
            self.concurrency_key.setToolTip,
            "Schedules with the same key never run at the same time.",
        )
        self.timeout = self._seconds_spin(t, "timeout", zero="No limit")
        t.bind(self.timeout.setToolTip, "Stop the job (and everything it started) after this long.")
        self.retries = QSpinBox()
        self.retries.setObjectName("retries")
        self.retries.setRange(0, 100)
        self.retry_backoff = self._seconds_spin(t, "retryBackoff", maximum=86400)
        self.retry_backoff.setValue(30)
        t.bind(self.retry_backoff.setPrefix, "first after ")
        t.bind(self.retry_backoff.setToolTip, "The wait doubles for each further retry.")
        self.jitter = self._seconds_spin(t, "jitter", zero="None", maximum=86400)
        t.bind(
            self.jitter.setToolTip,
            "Start up to this much later, at random, so many jobs do not start at once.",
        )
        self.http = False
        """The job is an HTTP request: its one timeout is this box's."""
        self.wake = QCheckBox()
        self.wake.setObjectName("wakeToRun")
        t.bind(self.wake.setText, "Wake the computer to run this")
        self.wake_how = help_label()
        self.wake_how.setObjectName("wakeHow")
        self.wake_way: Callable[[], WakeWay] = this_machine_way
        """How this machine is woken (the OS is asked once, when the box is first ticked)."""
        self.error = error_label("policiesError")

        form = QFormLayout(self)
        form.addRow(t.label("Missed runs"), stacked(self.catch_up, self.catch_up_help))
        form.addRow(t.label("Catch up only within"), self.catch_up_within)
        form.addRow(t.label("If still running"), stacked(self.overlap, self.overlap_help))
        form.addRow(t.label("Overlap group"), self.concurrency_key)
        form.addRow(t.label("Timeout"), self.timeout)
        form.addRow(t.label("Retries"), row(self.retries, self.retry_backoff, stretch=1))
        form.addRow(t.label("Jitter"), self.jitter)
        form.addRow(row(self.wake, self.wake_how, stretch=1))
        self.background = QCheckBox()
        self.background.setObjectName("background")
        t.bind(self.background.setText, "Run in the background: low CPU and disk priority")
        form.addRow(self.background)
        form.addRow(self.error)

        for combo in (self.catch_up, self.overlap):
            combo.currentIndexChanged.connect(self.changed)
        for spin in (
            self.catch_up_within,
            self.timeout,
            self.retries,
            self.retry_backoff,
            self.jitter,
        ):
            spin.valueChanged.connect(self.changed)
        self.concurrency_key.textChanged.connect(self.changed)
        self.wake.toggled.connect(self.changed)
        self.background.toggled.connect(self.changed)
        self.changed.connect(self.update_help)
        self.update_help()

    @staticmethod
    def _seconds_spin(
        texts: Texts, name: str, *, zero: str | None = None, maximum: int = MAX_SECONDS
    ) -> QSpinBox:
        spin = QSpinBox()
        spin.setObjectName(name)
        spin.setRange(0, maximum)
        texts.bind(spin.setSuffix, " s")
        if zero is not None:
            texts.bind(spin.setSpecialValueText, zero)  # shown at the minimum, 0
        return spin

    @staticmethod
    def _enum_combo(texts: Texts, name: str, choices: dict[Any, tuple[str, str]]) -> QComboBox:
        """A combo over a policy enum; each item's data is the value the service takes."""
        combo = QComboBox()
        combo.setObjectName(name)
        for index, (member, (label, _help)) in enumerate(choices.items()):
            combo.addItem("", member.value)
            texts.bind(partial(combo.setItemText, index), label)
        return combo

    def update_help(self) -> None:
        """The lines under the combos say what the chosen policy does; unused fields grey out."""
        catch_up = CatchUp(self.catch_up.currentData())
        self.catch_up_help.setText(tr(CATCH_UP[catch_up][1]))
        self.catch_up_within.setEnabled(catch_up is CatchUp.latest)
        self.overlap_help.setText(tr(OVERLAP[Overlap(self.overlap.currentData())][1]))
        self.retry_backoff.setEnabled(self.retries.value() > 0)
        # An HTTP request always has a timeout: "none" would be its default, not no limit.
        zero = tr("Default ({seconds} s)", seconds=30) if self.http else tr("No limit")
        self.timeout.setSpecialValueText(zero)
        waking = self.wake.isChecked()
        self.wake_how.setVisible(waking)
        if waking:
            self.wake_how.setText(way_words(self.wake_way()))

    def set_http(self, http: bool) -> None:
        if http != self.http:
            self.http = http
            self.update_help()

    def load(self, policies: Json) -> None:
        self.catch_up.setCurrentIndex(self.catch_up.findData(policies["catch_up"]))
        self.catch_up_within.setValue((policies["catch_up_within"] or 0) / 3600)
        self.overlap.setCurrentIndex(self.overlap.findData(policies["overlap"]))
        self.concurrency_key.setText(policies["concurrency_key"] or "")
        self.timeout.setValue(round(policies["timeout"] or 0))
        self.retries.setValue(policies["retries"])
        self.retry_backoff.setValue(round(policies["retry_backoff"]))
        self.jitter.setValue(round(policies["jitter"]))
        self.wake.setChecked(bool(policies.get("wake_to_run")))
        self.background.setChecked(bool(policies.get("background")))

    def policies_json(self) -> Json:
        return {
            "catch_up": self.catch_up.currentData(),
            "catch_up_within": self.catch_up_within.value() * 3600 or None,
            "overlap": self.overlap.currentData(),
            "concurrency_key": self.concurrency_key.text().strip() or None,
            "timeout": self.timeout.value() or None,
            "retries": self.retries.value(),
            "retry_backoff": self.retry_backoff.value(),
            "jitter": self.jitter.value(),
            "wake_to_run": self.wake.isChecked(),
            "background": self.background.isChecked(),
        }


register(
    "zh",
    {
        "Run in the background: low CPU and disk priority": "在后台运行：降低 CPU 和磁盘优先级",
        "Run once, late": "补跑一次（标记为迟到）",
        "After sleep or shutdown, the most recent missed run is run once, marked late; "
        "older missed runs are recorded as skipped.": (
            "休眠或关机后，只补跑最近一次错过的运行，并标记为迟到；更早错过的运行记为跳过。"
        ),
        "Skip missed runs": "跳过错过的运行",
        "A run missed by more than a minute is recorded as skipped; the schedule waits for "
        "its next due time.": "错过超过一分钟的运行记为跳过；等待下一次到期时间。",
        "Skip": "跳过",
        "While the previous run is still going, a new one is skipped (busy).": (
            "上一次运行尚未结束时，新的运行被跳过（忙）。"
        ),
        "Queue": "排队",
        "A new run waits for the previous one to finish (at most one waits).": (
            "新的运行等待上一次结束（最多一个在等待）。"
        ),
        "Run in parallel": "并行运行",
        "A new run starts alongside the previous one.": "新的运行与上一次同时进行。",
        "Replace": "替换",
        "The previous run is stopped, then the new one starts.": "先停止上一次运行，再开始新的运行。",
        " s": " 秒",
        " h": " 小时",
        "Catch-up": "补跑",
        "No limit": "不限",
        "A missed run older than this is skipped instead.": "错过超过这个时长的运行将被跳过。",
        "If still running": "仍在运行时",
        "This schedule alone": "仅本计划自身",
        "Schedules with the same key never run at the same time.": "键相同的计划永远不会同时运行。",
        "Stop the job (and everything it started) after this long.": (
            "超过这个时长就停止任务（及其启动的所有进程）。"
        ),
        "first after ": "首次间隔 ",
        "The wait doubles for each further retry.": "之后每次重试的等待时间加倍。",
        "None": "无",
        "Start up to this much later, at random, so many jobs do not start at once.": (
            "随机延后最多这么久再启动，避免许多任务同时开始。"
        ),
        "Policies": "策略",
        "Missed runs": "错过的运行",
        "Catch up only within": "仅在此时限内补跑",
        "Overlap group": "互斥组",
        "Retries": "重试次数",
        "Jitter": "随机延迟",
        "Timeout": "超时",
        "Default ({seconds} s)": "默认（{seconds} 秒）",
    },
)
