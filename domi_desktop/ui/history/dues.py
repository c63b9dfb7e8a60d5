"""A due in one line, in the app's language: what History's details say of a run and what the
Timeline says of the same due, from one function (``due_words``) over the core's wording
(``story.dues``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from domi_desktop.cron import local_zone
from domi_desktop.errors import DomiError
from domi_desktop.model import Run, RunStatus
from domi_desktop.ports import RunReader
from domi_desktop.story import MachineSpan
from domi_desktop.story.dues import ONE_DUE, DueStory, Voice, due_line, explain_one
from domi_desktop.ui.history.texts import STATUS_LABELS, reason_words
from domi_desktop.ui.i18n import register, tr, weekdays

FIRE_WITHIN = 101
"""A missed due's run is followed by its fire within this many ids (at most 100 skipped rows
are written with a fire, in the same transaction)."""
_TICK = timedelta(microseconds=1)

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
    },
)


@runtime_checkable
class StoryReader(Protocol):
    """The store as History and the Timeline read a due's story: its runs and the machine's."""

    def machine_spans(
        self, start: datetime, end: datetime, machine: str | None = None
    ) -> list[MachineSpan]: ...


def clock_near(due: datetime) -> Callable[[datetime], str]:
    """Instants on the local clock to the minute: ``07:03`` on the due's own day, else with the
    weekday (``Tue 07:03``), so a sleep of three days reads as one."""
    try:
        zone = local_zone()
    except DomiError:
        zone = None
    day = due.astimezone(zone).date()
    names = weekdays()

    def clock(moment: datetime) -> str:
        local = moment.astimezone(zone)
        if local.date() == day:
            return f"{local:%H:%M}"
        return f"{names[local.weekday()]} {local:%H:%M}"

    return clock


def _status(status: RunStatus) -> str:
    return tr(STATUS_LABELS[status])


def due_words(story: DueStory) -> str:
    """The one line of a due, as History and the Timeline both show it."""
    return due_line(story, Voice(tr, clock_near(story.due), _status, reason_words))


def has_due(run: Run) -> bool:
    return run.due is not None and (run.trigger in ONE_DUE or run.status is RunStatus.waiting)


def story_of(store: RunReader, run: Run, now: datetime) -> DueStory | None:
    """``run``'s due story read from the store (History's way: one run at a time); None for a
    run with no due of its own or a store that keeps no story."""
    if not has_due(run) or not isinstance(store, StoryReader):
        return None
    later = store.runs_by_id(range(run.id + 1, run.id + FIRE_WITHIN + 1))
    mine = [each for each in later.values() if each.schedule_id == run.schedule_id]
    assert run.due is not None
    until = max([run.due, *(each.started_at or each.fired_at or run.due for each in mine)])
    spans: Sequence[MachineSpan] = store.machine_spans(run.due, until + _TICK)
    return explain_one(run, mine, spans, now)
