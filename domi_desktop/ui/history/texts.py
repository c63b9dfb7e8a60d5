"""How a run reads in History and the windows: its status, trigger and reason in words, its times
and duration, translated (zh) through ``tr()``."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from domi_desktop.cron import LOCAL
from domi_desktop.model import PROCESS_DIED, WARDEN_STOPPED, Run, RunStatus, SkipReason, Trigger
from domi_desktop.runtime.gates import DISABLED_WHILE_WAITING
from domi_desktop.ui import condition_words  # noqa: F401  (the gates' words in Chinese)
from domi_desktop.ui.i18n import person_time, register, tr
from domi_desktop.ui.notices import span_words

STATUS_LABELS = {
    RunStatus.running: "running",
    RunStatus.succeeded: "succeeded",
    RunStatus.failed: "failed",
    RunStatus.timed_out: "timed out",
    RunStatus.interrupted: "interrupted",
    RunStatus.skipped: "skipped",
    RunStatus.waiting: "waiting",
}
TRIGGER_LABELS = {
    Trigger.scheduled: "scheduled",
    Trigger.catch_up: "catch-up",
    Trigger.manual: "manual",
    Trigger.resumed: "resumed",
    Trigger.login: "at login",
    Trigger.unlock: "at unlock",
    Trigger.resume: "on wake",
    Trigger.before_sleep: "before sleep",
}
# The reasons the app itself records; anything else (an error message) is shown as it was written.
_REASONS = {
    SkipReason.missed.value: "Missed: the computer was asleep or off at the due time",
    SkipReason.busy.value: "Skipped: the previous run was still running",
    SkipReason.paused.value: "Skipped: the schedule was paused",
    SkipReason.catch_up_window.value: "Skipped: too late to catch up (outside the catch-up window)",
    SkipReason.you_skipped.value: "Skipped: you skipped it",
    PROCESS_DIED: "The app stopped while this run was in progress",
}

# The Reason column's word for what the app records; an error message is shown as written.
_SHORT_REASONS = {
    SkipReason.missed.value: "missed while asleep",
    SkipReason.busy.value: "busy",
    SkipReason.paused.value: "paused",
    SkipReason.catch_up_window.value: "too late to catch up",
    SkipReason.you_skipped.value: "you skipped it",
    PROCESS_DIED: "the app stopped",
    WARDEN_STOPPED: "stopped: the app did not renew its lease",
    "on battery the whole window": "on battery the whole window",
    DISABLED_WHILE_WAITING: "turned off while it waited",
}
_WAITING_FOR = {
    "a wired network": "waiting for a wired network",
    "the charger": "waiting for the charger",
    "the network": "waiting for the network",
    "an unmetered network": "waiting for an unmetered network",
    "its conditions": "waiting for its conditions",
    "you to step away": "waiting for you to step away",
}
_STOPPED = "stopped"

FAILURES = frozenset({RunStatus.failed, RunStatus.timed_out})
_NOT_RUN = frozenset({RunStatus.skipped, RunStatus.waiting})
"""Runs that never started: nothing of theirs "fired"."""

register(
    "zh",
    {
        "Schedule": "计划",
        "Due": "应运行时间",
        "Started": "开始时间",
        "Status": "状态",
        "Reason": "原因",
        "exit code {code}": "退出码 {code}",
        "killed by signal {number} ({name})": "被信号 {number}（{name}）终止",
        "timed out after {span}": "{span}后超时",
        "HTTP {code}": "HTTP {code}",
        "could not write the log file: {error}": "无法写入日志文件：{error}",
        "missed while asleep": "睡眠中错过",
        "waiting for you to step away": "等待你离开电脑",
        "waiting for the window {hours}": "等待时段 {hours}",
        "outside the window {hours}": "不在时段 {hours} 内",
        "asleep {span}": "睡眠 {span}",
        "on battery the whole window": "整个时段都在用电池",
        "busy": "上一次仍在运行",
        "paused": "已暂停",
        "too late to catch up": "已超出补运行时限",
        "you skipped it": "你已跳过",
        "Skipped: you skipped it": "跳过：你选择了跳过这一次",
        "turned off while it waited": "等待期间计划被停用",
        "the app stopped": "应用已退出",
        "stopped: the app did not renew its lease": "已停止：应用未按时续租",
        "waiting for the charger": "正在等待充电器",
        "waiting for the network": "正在等待网络",
        "waiting for an unmetered network": "正在等待不计流量的网络",
        "waiting for its conditions": "正在等待运行条件",
        "stopped": "已停止",
        "Trigger": "触发方式",
        "Late": "延迟",
        "Missed": "错过",
        "Duration": "耗时",
        "Exit code": "退出码",
        "running": "运行中",
        "succeeded": "成功",
        "failed": "失败",
        "timed out": "超时",
        "interrupted": "已中断",
        "skipped": "已跳过",
        "waiting": "等待条件",
        "scheduled": "按计划",
        "catch-up": "补运行",
        "manual": "手动",
        "resumed": "恢复运行",
        "at login": "登录时",
        "at unlock": "解锁时",
        "on wake": "唤醒时",
        "before sleep": "睡眠前",
        "waiting for the disk {name}": "正在等待磁盘 {name}",
        "waiting for the {name} network": "正在等待网络 {name}",
        "waiting for a wired network": "正在等待有线网络",
        "Missed: the computer was asleep or off at the due time": "错过：到点时电脑处于睡眠或关机状态",
        "Skipped: the previous run was still running": "跳过：上一次运行尚未结束",
        "Skipped: the schedule was paused": "跳过：该计划已暂停",
        "Skipped: too late to catch up (outside the catch-up window)": "跳过：已超出补运行时限",
        "The app stopped while this run was in progress": "运行过程中应用已退出",
        "yes": "是",
        "{seconds} s": "{seconds} 秒",
        "{minutes} min {seconds} s": "{minutes} 分 {seconds} 秒",
        "{hours} h {minutes} min": "{hours} 小时 {minutes} 分",
        "Ran late: due {due}, started {fired}": "延迟运行：应于 {due} 运行，实际 {fired} 开始",
        "Earlier runs skipped: {count}": "跳过的更早运行：{count} 次",
    },
)


def format_time(moment: datetime | None, tz: str = LOCAL) -> str:
    """``Mon 2026-03-02 14:00`` on the local clock, to the minute, with the time in the zone
    ``tz`` beside it when that clock differs: ``Mon 2026-03-02 14:00 (09:00 New York)``."""
    if moment is None:
        return ""
    return person_time(moment, tz, brief=False, year=True)


def format_duration(duration: timedelta) -> str:
    # Wall-clock times are recorded, so a clock set back mid-run can make this negative.
    seconds = max(0.0, duration.total_seconds())
    if seconds < 59.5:  # rounds to "1 min 00 s" from here, never to "60 s"
        shown = f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"
        return tr("{seconds} s", seconds=shown)
    whole = round(seconds)
    if whole < 3600:
        return tr("{minutes} min {seconds} s", minutes=whole // 60, seconds=f"{whole % 60:02d}")
    return tr("{hours} h {minutes} min", hours=whole // 3600, minutes=f"{whole // 60 % 60:02d}")


def stopped(run: Run) -> bool:
    """Whether the run was stopped (by the user, or when a condition went away)."""
    return run.reason is not None and run.reason.startswith(_STOPPED)


def not_run(run: Run) -> bool:
    """Skipped or waiting: the run never started."""
    return run.status in _NOT_RUN


def short_reason(run: Run) -> str:
    """The Reason column: why it was skipped, what it waits for, that it was stopped."""
    reason = run.reason
    if reason is None:
        return ""
    if stopped(run):
        return tr(_STOPPED)
    return reason_words(reason)


def reason_words(reason: str) -> str:
    """A recorded reason in a few words of the app's language: ``waiting for the charger``,
    ``exit code 3``; a message of the job's own stays as it was written."""
    known = _SHORT_REASONS.get(reason)
    if known is not None:
        return tr(known)
    if reason.startswith("waiting for "):
        what = _WAITING_FOR.get(reason.removeprefix("waiting for "))
        if what is not None:
            return tr(what)
    waited = _waited_words(reason)
    if waited is not None:
        return waited
    for pattern, text in _PATTERNS:
        matched = pattern.fullmatch(reason)
        if matched is not None:
            return tr(text, **matched.groupdict())
    return reason.splitlines()[0]


_WAITED = re.compile(r"(?P<how>skipped|ran anyway) after waiting (?P<span>.+?) for (?P<what>.+)")
_SPAN_PART = re.compile(r"(?P<count>\d+) (?P<unit>day|hour|minute|second)s?")
_DISK = re.compile(r"the disk (?P<name>.+)")
_UNIT = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}
_WHAT = ("the charger", "the network", "an unmetered network", "its conditions")


def _waited_words(reason: str) -> str | None:
    """A wait that ran out, as recorded in English ("skipped after waiting 2 hours for the
    charger"), in the app's language: its span from the recorded numbers, its thing translated
    when it is one of the gates' own."""
    matched = _WAITED.fullmatch(reason)
    if matched is None:
        return None
    parts = matched["span"].split(" ")
    pairs = [" ".join(parts[i : i + 2]) for i in range(0, len(parts), 2)]
    seconds = 0
    for pair in pairs:
        part = _SPAN_PART.fullmatch(pair)
        if part is None:
            return None
        seconds += int(part["count"]) * _UNIT[part["unit"]]
    span = span_words(timedelta(seconds=seconds))
    what = matched["what"]
    disk = _DISK.fullmatch(what)
    if disk is not None:
        what = tr("the disk {name}", name=disk["name"])
    elif what in _WHAT:
        what = tr(what)
    if matched["how"] == "skipped":
        return tr("skipped after waiting {span} for {what}", span=span, what=what)
    return tr("ran anyway after waiting {span} for {what}", span=span, what=what)


_PATTERNS = (
    (re.compile(r"exit code (?P<code>-?\d+)"), "exit code {code}"),
    (re.compile(r"killed by signal (?P<number>\d+) \((?P<name>\w+)\)"),
     "killed by signal {number} ({name})"),
    (re.compile(r"timed out after (?P<span>.+)"), "timed out after {span}"),
    (re.compile(r"HTTP (?P<code>\d+)"), "HTTP {code}"),
    (re.compile(r"waiting for the disk (?P<name>.+)"), "waiting for the disk {name}"),
    (re.compile(r"waiting for the (?P<name>.+) network"), "waiting for the {name} network"),
    (re.compile(r"waiting for the window (?P<hours>[\d:-]+)"), "waiting for the window {hours}"),
    (re.compile(r"outside the window (?P<hours>[\d:-]+)"), "outside the window {hours}"),
    (re.compile(r"asleep (?P<span>[\d: -]+)"), "asleep {span}"),
    # No longer given (a log that cannot be made no longer stops a run), but kept in histories.
    (re.compile(r"could not write the log file: (?P<error>.+)"),
     "could not write the log file: {error}"),
)  # fmt: skip
"""The runner's own reasons that carry a value (``actions``): translated around it."""


def exit_text(run: Run) -> str:
    """The exit code, or "stopped" for a job the app ended (its -15 is the app's signal)."""
    if stopped(run):
        return tr(_STOPPED)
    return "" if run.exit_code is None else str(run.exit_code)


def reason_text(reason: str | None) -> str:
    if reason is None:
        return ""
    known = _REASONS.get(reason)
    return reason if known is None else tr(known)
