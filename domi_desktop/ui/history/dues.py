"""A due in one line, in the app's language: what History's details say of a run and what the
Timeline says of the same due, from one function (``due_words``) over the core's wording
(``story.dues``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from domi_desktop.cron import local_zone
from domi_desktop.errors import DomiError
from domi_desktop.model import Run, RunStatus
from domi_desktop.ports import RunReader
from domi_desktop.story import Pause
from domi_desktop.story.dues import DueStory, Voice, clock_near, due_line, pause_line
from domi_desktop.ui.history.texts import STATUS_LABELS, reason_words
from domi_desktop.ui.i18n import register, tr, weekdays

register(
    "zh",
    {
        "missed: the laptop was asleep {span}": "错过：电脑在 {span} 处于睡眠",
        "missed: domi-desktop was not running {span}": "错过：domi-desktop 在 {span} 未运行",
        "missed: the computer was asleep or off": "错过：电脑处于睡眠或关机状态",
        "late: the laptop was asleep {span}": "延迟：电脑在 {span} 处于睡眠",
        "late: domi-desktop was not running {span}": "延迟：domi-desktop 在 {span} 未运行",
        "late": "延迟",
        "on time": "准时",
        "skipped: {reason}": "已跳过：{reason}",
        "waited {wait} for {what}": "等待{what} {wait}",
        "waiting for {what} since {time}": "自 {time} 起等待{what}",
        "ran once at {time}, late": "已于 {time} 补运行一次（延迟）",
        "ran once at {time}, late, {status}": "已于 {time} 补运行一次（延迟），{status}",
        "ran once at {time}, on time": "已于 {time} 运行一次（准时）",
        "ran once at {time}, on time, {status}": "已于 {time} 运行一次（准时），{status}",
        "ran once, running since {time}": "运行一次，自 {time} 起运行中",
        "and {count} more before it, counted and not listed": "此前另有 {count} 次，已计数未列出",
        "not run since": "此后未运行",
        "ran at {time}": "于 {time} 运行",
        "ran at {time}, {status}": "于 {time} 运行，{status}",
        "ran at {time}, {status}: {reason}": "于 {time} 运行，{status}：{reason}",
        "running since {time}": "自 {time} 起运行中",
        "1 earlier due skipped": "跳过了 1 次更早的运行",
        "{count} earlier dues skipped": "跳过了 {count} 次更早的运行",
        "{start}-{end}": "{start}–{end}",
        "{minutes} min": "{minutes} 分钟",
        "the charger": "充电器",
        "the network": "网络",
        "an unmetered network": "不计流量的网络",
        "its conditions": "运行条件",
        "Paused all schedules {start} – {end} ({dues})": "全部计划已暂停 {start} – {end}（{dues}）",
        "Paused all schedules since {start} ({dues})": "自 {start} 起全部计划已暂停（{dues}）",
        "{count} dues not run": "{count} 次到期未运行",
        "1 due not run": "1 次到期未运行",
        "no due fell in it": "期间没有到期",
    },
)


@runtime_checkable
class StoryReader(Protocol):
    """The store as History reads a due's story (``Store.due_story``)."""

    def due_story(self, run: Run, now: datetime) -> DueStory | None: ...


@runtime_checkable
class PauseReader(Protocol):
    """The store as History reads this machine's "Pause all" spans (``Store.pauses``)."""

    def pauses(self, start: datetime, end: datetime, machine: str | None = None) -> list[Pause]: ...


def _clock(due: datetime) -> Callable[[datetime], str]:
    try:
        zone = local_zone()
    except DomiError:
        zone = None
    return clock_near(due, zone, weekdays())


def _status(status: RunStatus) -> str:
    return tr(STATUS_LABELS[status])


def due_words(story: DueStory) -> str:
    """The one line of a due, as History and the Timeline both show it."""
    return due_line(story, Voice(tr, _clock(story.due), _status, reason_words))


def story_of(store: RunReader, run: Run, now: datetime) -> DueStory | None:
    """``run``'s due story (None for a run with no due, or a store that keeps no story)."""
    return store.due_story(run, now) if isinstance(store, StoryReader) else None


def pause_words(pause: Pause) -> str:
    """A pause in one line, its dues counted in it, as History and the Timeline show it:
    ``Paused all schedules Tue 14:00 – 16:30 (3 dues not run)``."""
    try:
        zone = local_zone()
    except DomiError:
        zone = None
    names = weekdays()

    def when(moment: datetime) -> str:
        local = moment.astimezone(zone)
        return f"{names[local.weekday()]} {local:%m-%d %H:%M}"

    return pause_line(pause, tr, when, _clock(pause.start))


PAUSES_SHOWN = 3
"""Pauses History lists above its table, the newest first."""
PAUSES_WITHIN = timedelta(days=92)
"""How far back they are read: the runs kept (``retention.MAX_AGE``) and a little more."""


def recent_pauses(store: RunReader, now: datetime) -> list[Pause]:
    """The newest pauses, each with its dues counted (none for a store that keeps none)."""
    if not isinstance(store, PauseReader):
        return []
    found = store.pauses(now - PAUSES_WITHIN, now + PAUSES_WITHIN)
    return list(reversed(found[-PAUSES_SHOWN:]))
