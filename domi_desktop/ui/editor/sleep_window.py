"""The "What if the laptop sleeps?" panel's window scenarios: for a schedule with hours
("Only between 22:00-06:00"), the laptop sleeps through part or all of the window of its next due.

Told by the scheduler's own window decisions (``served``, ``window_gate``, ``window_reason``),
played minute by minute over the awake part of the window, never worked out again here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from enum import Enum

from domi_desktop.cron import next_run, parse, prev_run, zone_for
from domi_desktop.model import Conditions, NetworkState, Policies, SystemState
from domi_desktop.scheduler.conditions import Gate, Verdict
from domi_desktop.scheduler.window import (
    Stretch,
    WindowTrack,
    observe,
    served,
    sleeps_seen,
    window_gate,
    window_reason,
)
from domi_desktop.ui import i18n
from domi_desktop.ui.condition_words import gate_words
from domi_desktop.ui.i18n import register, tr


class WindowCase(Enum):
    part = "Asleep through part of the window"
    whole = "Asleep through the whole window"


AWAKE = SystemState(network=NetworkState.online, on_ac=True, idle=timedelta(days=1))
"""The machine while it is awake in the story: on the charger, online, nobody at the keyboard."""
FELL_ASLEEP = timedelta(minutes=20)
"""The laptop goes to sleep this long before the window opens."""
WOKE_AFTER = timedelta(minutes=70)
"""In "the whole window": it wakes this long after the window closes."""
PART = timedelta(hours=2)
"""In "part of the window": it wakes this far into the window (or a third of it, if shorter)."""
STEP = timedelta(minutes=1)
"""The runtime looks at least once a minute while awake."""


@dataclass(frozen=True, slots=True)
class Told:
    sentence: str
    lines: tuple[str, ...]


def _minute(at: datetime) -> datetime:
    return at.replace(second=0, microsecond=0)


def tell_window(
    case: WindowCase, expr: str, tz: str, policies: Policies, now: datetime, kind: str
) -> Told | None:
    """The case around the first due after ``now``; ``None`` when nothing is due or the
    schedule has no window."""
    conditions = policies.conditions
    window = conditions.window
    zone = zone_for(tz)
    parsed = parse(expr)
    due = next_run(parsed, now, zone)
    if window is None or due is None:
        return None

    def moment(at: datetime) -> str:
        return i18n.format_moment(at.astimezone(zone))

    stretch = served(parsed, zone, window, due)
    if stretch is None:
        outside = window_gate(conditions, kind, AWAKE, None, due, None, "")
        return Told(
            tr("Does not run: {reason}.", reason=gate_words(outside) or ""),
            (tr("The run due {due} lies outside every window.", due=moment(due)),),
        )
    last = prev_run(parsed, due - timedelta(seconds=1), zone) or now
    asleep = stretch.start - FELL_ASLEEP
    if case is WindowCase.part:
        wake = _minute(stretch.start + min(PART, stretch.length / 3))
    else:
        wake = _minute(stretch.end + WOKE_AFTER)
    story = tr(
        "Last run {last}. The next run's window ({hours}) opens at {opens} and closes at "
        "{closes}. The laptop sleeps from {sleep} to {wake}, then stays on, on the charger and "
        "online.",
        last=moment(last), hours=window.text, opens=moment(stretch.start),
        closes=moment(stretch.end), sleep=moment(asleep), wake=moment(wake),
    )  # fmt: skip
    first = tr(
        "{at}: the window opens while the laptop sleeps: the run due {due} waits.",
        at=moment(stretch.start), due=moment(due),
    )  # fmt: skip
    ran, gate = _play(conditions, kind, stretch, zone, wake)
    if ran is not None:
        at = moment(ran)
        line = tr("{at}: the first awake minute inside the window: runs.", at=at)
        return Told(
            tr("Runs once at {at}, inside the window.", at=at),
            (story, "", f"• {first}", f"• {line}"),
        )
    reason = gate.said or gate_words(gate) or ""
    values = {"at": moment(max(wake, stretch.end)), "closes": moment(stretch.end)}
    if gate.verdict is Verdict.run_anyway:
        line = tr(
            "{at}: the window closed at {closes} unused: runs anyway, recorded “{reason}”.",
            reason=reason, **values,
        )  # fmt: skip
        sentence = tr("Runs once at {at}, after the window.", at=values["at"])
    else:
        line = tr(
            "{at}: the window closed at {closes} unused: recorded skipped, “{reason}”.",
            reason=reason, **values,
        )  # fmt: skip
        sentence = tr("Does not run: skipped at the window's end, “{reason}”.", reason=reason)
    return Told(sentence, (story, "", f"• {first}", f"• {line}"))


def _play(
    conditions: Conditions,
    kind: str,
    stretch: Stretch,
    zone: tzinfo,
    wake: datetime,
) -> tuple[datetime | None, Gate]:
    """Look once a minute from ``wake`` to the window's end as the runtime does: the moment the
    run starts, or ``None`` and the gate once the window is over, with the reason the runtime
    records (what its looks did not see as sleeps, and what was missing while awake)."""
    track = WindowTrack()
    at = wake
    while at < stretch.end:
        gate = window_gate(conditions, kind, AWAKE, stretch, at, None, "")
        if gate.verdict in (Verdict.run, Verdict.run_anyway):
            return at, gate
        track = observe(track, at, gate.unmet)
        at += STEP
    said = window_reason(stretch, zone, sleeps_seen(track, stretch), track.needs)
    over = max(wake, stretch.end)
    return None, window_gate(conditions, kind, AWAKE, stretch, over, None, said)


register(
    "zh",
    {
        WindowCase.part.value: "休眠了部分时段",
        WindowCase.whole.value: "休眠了整个时段",
        "Does not run: {reason}.": "不运行：{reason}。",
        "The run due {due} lies outside every window.": "{due} 的运行不在任何时段之内。",
        "Last run {last}. The next run's window ({hours}) opens at {opens} and closes at "
        "{closes}. The laptop sleeps from {sleep} to {wake}, then stays on, on the charger and "
        "online.": (
            "上次运行 {last}。下次运行的时段（{hours}）从 {opens} 开始，到 {closes} 结束。"
            "笔记本从 {sleep} 休眠到 {wake}，之后一直开着，接着充电器并已联网。"
        ),
        "{at}: the window opens while the laptop sleeps: the run due {due} waits.": (
            "{at}：时段开始时笔记本在休眠：{due} 的运行等待中。"
        ),
        "{at}: the first awake minute inside the window: runs.": (
            "{at}：时段内第一个醒着的分钟：运行。"
        ),
        "Runs once at {at}, inside the window.": "在时段内的 {at} 运行一次。",
        "{at}: the window closed at {closes} unused: runs anyway, recorded “{reason}”.": (
            "{at}：时段已于 {closes} 结束且未被使用：照常运行，记录为“{reason}”。"
        ),
        "Runs once at {at}, after the window.": "在时段结束后的 {at} 运行一次。",
        "{at}: the window closed at {closes} unused: recorded skipped, “{reason}”.": (
            "{at}：时段已于 {closes} 结束且未被使用：记录为已跳过，“{reason}”。"
        ),
        "Does not run: skipped at the window's end, “{reason}”.": (
            "不运行：在时段结束时跳过，“{reason}”。"
        ),
    },
)
