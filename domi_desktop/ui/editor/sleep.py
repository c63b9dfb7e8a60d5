"""The editor's "What if the laptop sleeps?" panel: a scenario around the schedule's next due time,
played through the scheduler's real decision code (``simulate``), told in words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from domi_desktop.cron import next_run, parse, prev_run, zone_for
from domi_desktop.model import CatchUp, Policies, SystemState
from domi_desktop.scheduler.conditions import RESOURCES, Verdict, gate
from domi_desktop.scheduler.simulate import SimulatedWake, play_wait, simulate
from domi_desktop.ui import i18n
from domi_desktop.ui.condition_words import gate_words, list_words, resources_waited_for
from domi_desktop.ui.editor.sleep_window import WindowCase, tell_window
from domi_desktop.ui.editor.waking import this_machine, wake_sentence
from domi_desktop.ui.i18n import register, tr

_year = [datetime.now().year]
"""The year of the panel's "now" (set at each run of the scenario), beside which a date in
another year carries its year."""


def format_moment(moment: datetime) -> str:
    """A moment of the story: ``Wed 03-06 03:00``, with the year when it is not this one."""
    return i18n.format_moment(moment, year=moment.year != _year[0])


class Scenario(Enum):
    before = "Opened before the due time"
    just_after = "Woke just after the due time"
    hour_late = "Woke an hour late"
    three_days = "Asleep three days"
    on_battery = "Woke on battery"
    resources_late = "What it waits for comes an hour late"


JUST_AFTER = timedelta(seconds=30)
"""Inside the scheduler's 60 s grace, so the run still counts as on time."""
LISTED_SKIPS = 3
"""Skipped due times named in a line; more are counted, not listed."""
ON_BATTERY = SystemState(on_ac=False, battery_percent=40)
"""The machine of the "on battery" scenario: unplugged, at a middling charge, network as usual."""
ARRIVES = timedelta(hours=1)
"""In that scenario: how long after the due time what the job waits for comes."""


@dataclass(frozen=True, slots=True)
class Story:
    """One scenario made concrete: the last run, the due time it is about, and the wakes."""

    last_due: datetime
    due: datetime
    asleep_from: datetime
    wakes: tuple[datetime, ...]


def build_story(scenario: Scenario, expr: str, tz: str, now: datetime) -> Story | None:
    """The scenario around the first due time after ``now``; ``None`` when nothing is due."""
    zone = zone_for(tz)
    parsed = parse(expr)
    due = next_run(parsed, now, zone)
    if due is None:
        return None
    last_due = prev_run(parsed, due - timedelta(seconds=1), zone) or now
    # "Before" is half an hour early, or half-way since the last run for frequent schedules, so
    # that it never falls before the last run itself.
    before = due - min(timedelta(minutes=30), (due - last_due) / 2)
    wakes = {
        Scenario.before: (before, due),
        Scenario.just_after: (due + JUST_AFTER,),
        Scenario.on_battery: (due + JUST_AFTER,),
        Scenario.resources_late: (due + JUST_AFTER,),
        Scenario.hour_late: (due + timedelta(hours=1),),
        Scenario.three_days: (before + timedelta(days=3),),
    }[scenario]
    return Story(last_due=last_due, due=due, asleep_from=before, wakes=wakes)


def _story_text(scenario: Scenario, story: Story, zone_name: str) -> str:
    zone = zone_for(zone_name)
    values = {
        "last": format_moment(story.last_due.astimezone(zone)),
        "due": format_moment(story.due.astimezone(zone)),
        "wake": format_moment(story.wakes[0].astimezone(zone)),
        "sleep": format_moment(story.asleep_from.astimezone(zone)),
    }
    template = {
        Scenario.before: "Last run {last}. The laptop is opened at {wake}, before the next "
        "due time ({due}), and stays on.",
        Scenario.just_after: "Last run {last}. The laptop sleeps through {due} and wakes at "
        "{wake}, just after it.",
        Scenario.hour_late: "Last run {last}. The laptop sleeps through {due} and wakes at "
        "{wake}, an hour late.",
        Scenario.three_days: "Last run {last}. The laptop sleeps from {sleep} to {wake}.",
        Scenario.on_battery: "Last run {last}. The laptop sleeps through {due} and wakes at "
        "{wake}, unplugged, with the battery at {percent} %.",
        Scenario.resources_late: "Last run {last}. The laptop wakes at {wake}, just after {due}; "
        "what the job waits for comes an hour after the due time.",
    }[scenario]
    return tr(template, percent=ON_BATTERY.battery_percent, **values)


def gate_lines(wakes: list[SimulatedWake], policies: Policies, kind: str) -> tuple[str, list[str]]:
    """What the schedule's conditions make of a run that is due while on battery: the sentence,
    and the detail lines (the wait, then what happens at its deadline if it has one)."""
    runs = [wake for wake in wakes if wake.run and wake.due is not None]
    if not runs:
        return summarize(wakes), []
    wake = runs[-1]
    assert wake.due is not None
    first = gate(policies.conditions, kind, ON_BATTERY, wake.due, wake.at, None)
    if first.verdict is Verdict.run:
        return summarize(wakes), []
    reason = gate_words(first) or ""
    at, due = format_moment(wake.at), format_moment(wake.due)
    lines = [tr("{at}: the run due {due} waits: {reason}.", at=at, due=due, reason=reason)]
    if first.until is not None:
        later = gate(policies.conditions, kind, ON_BATTERY, wake.due, first.until, None)
        if later.verdict is not Verdict.wait:
            lines.append(
                tr(
                    "{at}: still on battery: {reason}.",
                    at=format_moment(first.until),
                    reason=gate_words(later) or "",
                )
            )
    elif any(item.need in RESOURCES for item in first.unmet):
        # A disk, a network's name or a path: the sentence names them.
        lines.append(tr("It starts as soon as all it waits for is there."))
    else:
        lines.append(tr("It starts as soon as the charger is plugged in."))
    return tr("Does not run yet: {reason}.", reason=reason), lines


def resource_lines(
    wakes: list[SimulatedWake], policies: Policies, kind: str
) -> tuple[str, list[str]]:
    """What the schedule's conditions make of a run due while its disk, network name or path is
    not there, which comes ``ARRIVES`` after the due time: the sentence, and the detail lines."""
    conditions = policies.conditions
    words = resources_waited_for(conditions)
    runs = [wake for wake in wakes if wake.run and wake.due is not None]
    if not runs or not words:
        return summarize(wakes), []
    wake = runs[-1]
    assert wake.due is not None
    waited = play_wait(conditions, kind, wake.due, wake.at, wake.due + ARRIVES)
    if waited is None:
        return summarize(wakes), []
    assert waited.until is not None  # what it waits for comes, so the wait ends
    due, what = format_moment(wake.due), list_words(words)
    at = format_moment(wake.at)
    reason = gate_words(waited.gate) or ""
    lines = [tr("{at}: the run due {due} waits: {reason}.", at=at, due=due, reason=reason)]
    until = format_moment(waited.until)
    if waited.verdict is not Verdict.run:
        outcome = "" if waited.deadline is None else gate_words(waited.deadline) or ""
        lines.append(tr("{at}: still not there: {reason}.", at=until, reason=outcome))
        return tr(
            "Waits for {what} until {at}: {reason}.", what=what, at=until, reason=outcome
        ), lines
    lines.append(
        tr("{at}: {what} is there: runs once for {due}, late.", at=until, what=what, due=due)
    )
    return tr("Waits for {what} until {at}, then runs once.", what=what, at=until), lines


def _skipped_phrase(count: int) -> str:
    if count == 1:
        return tr("1 earlier run skipped")
    return tr("{count} earlier runs skipped", count=count)


def _policy_reason(policies: Policies) -> str:
    if policies.catch_up is CatchUp.skip:
        return tr("catch-up is set to skip missed runs")
    hours = (policies.catch_up_within or timedelta(0)).total_seconds() / 3600
    return tr("it is older than the catch-up window ({hours:g} h)", hours=hours)


def _wake_line(wake: SimulatedWake, policies: Policies) -> str:
    at = format_moment(wake.at)
    if not wake.fire or wake.due is None:
        return tr("{at}: nothing is due yet, no run.", at=at)
    due = format_moment(wake.due)
    if not wake.run:
        line = tr(
            "{at}: the run due {due} is skipped: {reason}.",
            at=at,
            due=due,
            reason=_policy_reason(policies),
        )
    elif wake.late:
        line = tr("{at}: runs once for {due}, late (catch-up).", at=at, due=due)
    else:
        line = tr("{at}: runs for {due}, on time.", at=at, due=due)
    if wake.missed_count:
        listed = tr(", ").join(format_moment(moment) for moment in wake.skipped[:LISTED_SKIPS])
        if wake.missed_count > LISTED_SKIPS:
            listed += tr(", ") + "…"
        line += "\n    " + tr(
            "{skipped}: {listed}", skipped=_skipped_phrase(wake.missed_count), listed=listed
        )
    return line


def summarize(wakes: list[SimulatedWake]) -> str:
    """One sentence for the whole scenario: what runs, how, and how many dues are skipped."""
    fired = [wake for wake in wakes if wake.fire]
    if not fired:
        return tr("Nothing runs.")
    outcome = fired[-1]  # each scenario has at most one fire; its outcome is the story's end
    if not outcome.run:
        text = tr("Does not run: skipped by the catch-up policy")
    elif outcome.late:
        text = tr("Runs once, late (catch-up)")
    else:
        text = tr("Runs once, on time")
    missed = sum(wake.missed_count for wake in fired)
    if missed:
        text = tr("{outcome}; {skipped}", outcome=text, skipped=_skipped_phrase(missed))
    return tr("{sentence}.", sentence=text)


GATED = {Scenario.on_battery: gate_lines, Scenario.resources_late: resource_lines}
"""The scenarios whose machine the conditions are played against, and how they are told."""


class SleepPanel(QGroupBox):
    """Pick a scenario; see what the scheduler would do with the schedule as edited right now."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scenario = QComboBox(self)
        self.scenario.setObjectName("simulateScenario")
        for scenario in Scenario:
            self.scenario.addItem("", scenario.name)
        self.result = QLabel(self)
        self.result.setObjectName("simulateResult")
        self.result.setWordWrap(True)
        font = self.result.font()
        font.setBold(True)
        self.result.setFont(font)
        self.details = QLabel(self)
        self.details.setObjectName("simulateDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.wake_line = QLabel(self)
        self.wake_line.setObjectName("wakeLine")
        self.wake_line.setWordWrap(True)
        self.wake_capability: Callable[[], str | None] = this_machine
        self._scenario_label = QLabel(self)
        form = QFormLayout()
        form.addRow(self._scenario_label, self.scenario)
        layout = QVBoxLayout(self)
        layout.addWidget(self.wake_line)
        layout.addLayout(form)
        layout.addWidget(self.result)
        layout.addWidget(self.details, 1)
        self._inputs: tuple[str, str, Policies, datetime, str] | None = None
        self.scenario.currentIndexChanged.connect(self._run)
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(tr("What if the laptop sleeps?"))
        self.scenario.setAccessibleName(tr("Scenario"))
        self._scenario_label.setText(tr("Scenario"))
        for index in range(self.scenario.count()):
            self.scenario.setItemText(index, tr(self._case(index).value))
        self._run()

    def _case(self, index: int) -> Scenario | WindowCase:
        name = str(self.scenario.itemData(index))
        return (
            WindowCase[name.removeprefix("window_")]
            if name.startswith("window_")
            else Scenario[name]
        )

    def current_scenario(self) -> Scenario | WindowCase:
        return self._case(self.scenario.currentIndex())

    def _offer_window(self, windowed: bool) -> None:
        """The window's cases are offered while the schedule has hours, after the others."""
        if (self.scenario.count() > len(Scenario)) == windowed:
            return
        self.scenario.blockSignals(True)
        try:
            if windowed:
                for case in WindowCase:
                    self.scenario.addItem(tr(case.value), f"window_{case.name}")
            else:
                while self.scenario.count() > len(Scenario):
                    self.scenario.removeItem(self.scenario.count() - 1)
        finally:
            self.scenario.blockSignals(False)

    def show_for(
        self,
        expr: str | None,
        tz: str | None,
        policies: Policies | None,
        now: datetime,
        action_kind: str = "command",
    ) -> None:
        """Re-run the scenario for the edited schedule; ``None`` parts mean they are invalid."""
        if expr is None or tz is None or policies is None:
            self._inputs = None
        else:
            self._inputs = (expr, tz, policies, now, action_kind)
        self._offer_window(policies is not None and policies.conditions.window is not None)
        self._run()

    def _run(self) -> None:
        if self._inputs is not None:
            _year[0] = self._inputs[3].year
        waking = self._inputs is not None and self._inputs[2].wake_to_run
        self.wake_line.setVisible(waking)
        if self._inputs is not None and waking:
            expr, tz, policies, now, _kind = self._inputs
            why_not = self.wake_capability()
            self.wake_line.setText(wake_sentence(expr, tz, policies, now, why_not))
        if self._inputs is None:
            self.result.setText(tr("Fix the schedule above to see what would happen."))
            self.details.clear()
            return
        expr, tz, policies, now, kind = self._inputs
        scenario = self.current_scenario()
        if isinstance(scenario, WindowCase):
            told = tell_window(scenario, expr, tz, policies, now, kind)
            self.result.setText(told.sentence if told else tr("No upcoming run to simulate."))
            self.details.setText("\n".join(told.lines) if told else "")
            return
        story = build_story(scenario, expr, tz, now)
        if story is None:
            self.result.setText(tr("No upcoming run to simulate."))
            self.details.clear()
            return
        wakes = simulate(expr, tz, story.last_due, story.wakes, policies)
        lines = [f"• {_wake_line(wake, policies)}" for wake in wakes]
        gating = GATED.get(scenario)
        if gating is not None:
            sentence, gated = gating(wakes, policies, kind)
            if gated:
                lines = [f"• {line}" for line in gated]
        else:
            sentence = summarize(wakes)
        self.result.setText(sentence)
        self.details.setText("\n".join([_story_text(scenario, story, tz), "", *lines]))


register(
    "zh",
    {
        Scenario.before.value: "在到期前打开",
        Scenario.just_after.value: "到期后刚刚唤醒",
        Scenario.hour_late.value: "晚了一小时才唤醒",
        Scenario.three_days.value: "休眠了三天",
        Scenario.on_battery.value: "使用电池时唤醒",
        Scenario.resources_late.value: "所等待的条件晚到一小时",
        "Last run {last}. The laptop wakes at {wake}, just after {due}; what the job waits for "
        "comes an hour after the due time.": (
            "上次运行 {last}。笔记本在 {wake} 唤醒，刚过 {due}；任务所等待的条件在到期一小时后才就绪。"
        ),
        "{at}: still not there: {reason}.": "{at}：仍未就绪：{reason}。",
        "Waits for {what} until {at}: {reason}.": "等待{what}直到 {at}：{reason}。",
        "{at}: {what} is there: runs once for {due}, late.": "{at}：{what}已就绪：为 {due} 补跑一次，迟到。",
        "Waits for {what} until {at}, then runs once.": "等待{what}直到 {at}，然后运行一次。",
        "Last run {last}. The laptop sleeps through {due} and wakes at {wake}, unplugged, with "
        "the battery at {percent} %.": (
            "上次运行 {last}。笔记本在 {due} 时处于休眠，{wake} 被唤醒，未接电源，电量 {percent} %。"
        ),
        "{at}: the run due {due} waits: {reason}.": "{at}：{due} 的运行在等待：{reason}。",
        "{at}: still on battery: {reason}.": "{at}：仍在使用电池：{reason}。",
        "It starts as soon as the charger is plugged in.": "一接上充电器就开始运行。",
        "It starts as soon as all it waits for is there.": "所等待的条件全部就绪后立即开始运行。",
        "Does not run yet: {reason}.": "暂不运行：{reason}。",
        "Last run {last}. The laptop is opened at {wake}, before the next due time ({due}), "
        "and stays on.": "上次运行 {last}。笔记本在 {wake} 打开，早于下次到期时间（{due}），之后一直开着。",
        "Last run {last}. The laptop sleeps through {due} and wakes at {wake}, just after it.": (
            "上次运行 {last}。笔记本在 {due} 时处于休眠，{wake} 刚过到期时间就被唤醒。"
        ),
        "Last run {last}. The laptop sleeps through {due} and wakes at {wake}, an hour late.": (
            "上次运行 {last}。笔记本在 {due} 时处于休眠，{wake} 才被唤醒，晚了一小时。"
        ),
        "Last run {last}. The laptop sleeps from {sleep} to {wake}.": (
            "上次运行 {last}。笔记本从 {sleep} 休眠到 {wake}。"
        ),
        "1 earlier run skipped": "跳过了 1 次更早的运行",
        "{count} earlier runs skipped": "跳过了 {count} 次更早的运行",
        "catch-up is set to skip missed runs": "补跑策略设为跳过错过的运行",
        "it is older than the catch-up window ({hours:g} h)": "已超出补跑时限（{hours:g} 小时）",
        "{at}: nothing is due yet, no run.": "{at}：还没有到期，不运行。",
        "{at}: the run due {due} is skipped: {reason}.": "{at}：{due} 的运行被跳过：{reason}。",
        "{at}: runs once for {due}, late (catch-up).": "{at}：为 {due} 补跑一次，迟到。",
        "{at}: runs for {due}, on time.": "{at}：按时运行 {due} 的任务。",
        "{skipped}: {listed}": "{skipped}：{listed}",
        ", ": "、",
        "Nothing runs.": "不会运行。",
        "Does not run: skipped by the catch-up policy": "不运行：被补跑策略跳过",
        "Runs once, late (catch-up)": "补跑一次，迟到",
        "Runs once, on time": "按时运行一次",
        "{outcome}; {skipped}": "{outcome}；{skipped}",
        "{sentence}.": "{sentence}。",
        "What if the laptop sleeps?": "如果笔记本休眠了会怎样？",
        "Scenario": "场景",
        "Fix the schedule above to see what would happen.": "请先修正上面的计划，才能看到会发生什么。",
        "No upcoming run to simulate.": "没有即将到来的运行可供模拟。",
    },
)
