"""Why each due did or did not run, in one line: the History, the Timeline and ``domi-desktop
timeline`` all word a due with ``due_line``, so the three can never tell it differently.

The English templates here are the keys; the windows pass ``tr`` (which translates them, zh in
``ui/history/dues.py``) and History's own time and reason words, the CLI plain ``str.format``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from enum import StrEnum

from domi_desktop.model import Run, RunStatus, SkipReason, Trigger, Window
from domi_desktop.story import MachineSpan, Pause, SpanKind, cause_of

MISSED = SkipReason.missed.value
_STARTED_AFTER = re.compile(r"started after waiting .+? for (?P<what>[^;]+)")
_WAITING_FOR = "waiting for "
_RAN = frozenset(
    {RunStatus.running, RunStatus.succeeded, RunStatus.failed, RunStatus.timed_out,
     RunStatus.interrupted}
)  # fmt: skip
LISTED_PER_FIRE = 100
"""The missed dues a fire writes a row for, the latest (``scheduler.decide.MAX_LISTED_SKIPS``);
the fire's ``missed_count`` counts them all."""
ONE_DUE = frozenset({Trigger.scheduled, Trigger.catch_up})
"""Runs that stand for a due of the calendar (a manual run or a re-run has none of its own)."""


class DueKind(StrEnum):
    on_time = "on_time"
    late = "late"
    missed = "missed"
    skipped = "skipped"
    waited = "waited"
    waiting = "waiting"


@dataclass(frozen=True, slots=True)
class DueStory:
    """One due of a schedule and what became of it."""

    run: Run
    """The run row of the due (skipped, waiting or run)."""
    kind: DueKind
    cause: MachineSpan | None = None
    """The asleep or off span that kept it from running on time."""
    served_by: Run | None = None
    """For a missed due: the catch-up run that ran once for it and the others."""
    waited: timedelta | None = None
    waited_for: str | None = None
    unlisted: int = 0
    """For the earliest listed missed due of a fire: its fire's missed dues before it that were
    counted and not listed (a fire lists its latest ``LISTED_PER_FIRE``)."""

    @property
    def due(self) -> datetime:
        assert self.run.due is not None
        return self.run.due


Words = Callable[..., str]
"""``words(template, **values)``: ``tr`` in the windows, ``str.format`` for the terminal."""

TEMPLATES = (
    "missed: the laptop was asleep {span}",
    "missed: domi-desktop was not running {span}",
    "missed: the computer was asleep or off",
    "late: the laptop was asleep {span}",
    "late: domi-desktop was not running {span}",
    "late",
    "on time",
    "skipped: {reason}",
    "waited {wait} for {what}",
    "waiting for {what} since {time}",
    "ran once at {time}, late",
    "ran once at {time}, late, {status}",
    "ran once at {time}, on time",
    "ran once at {time}, on time, {status}",
    "ran once, running since {time}",
    "and {count} more before it, counted and not listed",
    "not run since",
    "ran at {time}",
    "ran at {time}, {status}",
    "ran at {time}, {status}: {reason}",
    "running since {time}",
    "1 earlier due skipped",
    "{count} earlier dues skipped",
    "{start}-{end}",
    "{minutes} min",
    "{hours} h {minutes} min",
)
"""Every template ``due_line`` may use (the zh catalog covers each: a test checks)."""
WAITED_FOR = ("the charger", "the network", "an unmetered network", "its conditions")
"""What the condition gates make a run wait for (``runtime.gates``)."""
CAUSES: dict[tuple[DueKind, SpanKind | None], str] = {
    (DueKind.missed, SpanKind.asleep): "missed: the laptop was asleep {span}",
    (DueKind.missed, SpanKind.off): "missed: domi-desktop was not running {span}",
    (DueKind.missed, None): "missed: the computer was asleep or off",
    (DueKind.late, SpanKind.asleep): "late: the laptop was asleep {span}",
    (DueKind.late, SpanKind.off): "late: domi-desktop was not running {span}",
    (DueKind.late, None): "late",
}
"""Why a due did not run on time, by what the machine was doing then (``cause_of``)."""


def has_due(run: Run) -> bool:
    """Whether ``run`` stands for a due of its schedule's calendar."""
    return run.due is not None and (run.trigger in ONE_DUE or run.status is RunStatus.waiting)


def explain(runs: Iterable[Run], spans: Sequence[MachineSpan], now: datetime) -> list[DueStory]:
    """The story of every due among ``runs`` (one schedule's, any order), by due."""
    ordered = sorted((run for run in runs if run.due is not None), key=lambda run: run.id)
    stories: list[DueStory] = []
    for index, run in enumerate(ordered):
        if not has_due(run):
            continue
        # The runs after it, lazily: only a missed due looks at them, for its fire (a copy of
        # the rest for every due made a week of 10,000 runs quadratic).
        later = (ordered[each] for each in range(index + 1, len(ordered)))
        stories.append(_story(run, later, spans, now))
    return sorted(stories, key=lambda story: (story.due, story.run.id))


def explain_one(
    run: Run, later: Sequence[Run], spans: Sequence[MachineSpan], now: datetime
) -> DueStory:
    """``run``'s story; ``later`` are runs of its schedule with higher ids (its fire among them)."""
    return _story(run, sorted(later, key=lambda each: each.id), spans, now)


def _story(run: Run, later: Iterable[Run], spans: Sequence[MachineSpan], now: datetime) -> DueStory:
    assert run.due is not None
    if run.status is RunStatus.skipped:
        if run.reason != MISSED:
            return DueStory(run, DueKind.skipped)
        # Its fire was claimed with it: the first later run of the schedule that is not a missed due.
        served, before_fire = None, 0
        for each in later:
            if each.schedule_id != run.schedule_id or each.trigger not in ONE_DUE:
                continue
            if each.status is RunStatus.skipped and each.reason == MISSED:
                before_fire += 1
                continue
            served = each
            break
        # The fire's rows are written oldest first: the first of a full list stands for the
        # dues of its fire that were counted and not listed.
        listed = before_fire + 1
        unlisted = 0
        if served is not None and listed == LISTED_PER_FIRE:
            unlisted = max(0, served.missed_count - listed)
        served = served if served is not None and served.status in _RAN else None
        ran = None if served is None else served.started_at or served.fired_at
        cause = cause_of(spans, run.due, ran)
        return DueStory(run, DueKind.missed, cause, served, unlisted=unlisted)
    if run.status is RunStatus.waiting:
        what = (run.reason or "").removeprefix(_WAITING_FOR) or None
        return DueStory(
            run, DueKind.waiting, waited=now - (run.fired_at or run.due), waited_for=what
        )
    waited = _STARTED_AFTER.match(run.reason or "")
    if waited is not None and run.started_at is not None:
        since = run.fired_at or run.due
        return DueStory(
            run, DueKind.waited, waited=run.started_at - since, waited_for=waited["what"].strip()
        )
    if run.late or run.trigger is Trigger.catch_up:
        ran = run.started_at or run.fired_at
        return DueStory(run, DueKind.late, cause_of(spans, run.due, ran))
    return DueStory(run, DueKind.on_time)


def span_words(span: timedelta, words: Words) -> str:
    """A wait to the minute: ``42 min``, ``2 h 05 min``."""
    minutes = max(0, round(span.total_seconds() / 60))
    if minutes < 60:
        return words("{minutes} min", minutes=minutes)
    return words("{hours} h {minutes} min", hours=minutes // 60, minutes=f"{minutes % 60:02d}")


def clock_near(
    due: datetime, zone: tzinfo | None, weekdays: Sequence[str]
) -> Callable[[datetime], str]:
    """Instants on the clock of ``zone`` to the minute: ``07:03`` on the due's own day, else
    with the weekday (``Tue 07:03``), so a sleep of three days reads as one."""
    day = due.astimezone(zone).date()

    def clock(moment: datetime) -> str:
        local = moment.astimezone(zone)
        if local.date() == day:
            return f"{local:%H:%M}"
        return f"{weekdays[local.weekday()]} {local:%H:%M}"

    return clock


@dataclass(frozen=True, slots=True)
class Voice:
    """How a line is worded: ``words`` fills a template (``tr`` or ``str.format``), ``clock``
    writes an instant (``07:03``), ``status`` a run status, ``reason`` a recorded reason in a
    few words (History's)."""

    words: Words
    clock: Callable[[datetime], str]
    status: Callable[[RunStatus], str]
    reason: Callable[[str], str]


def due_line(story: DueStory, voice: Voice) -> str:
    """``missed: the laptop was asleep 23:10-07:02; ran once at 07:03, late``."""
    run, words, clock = story.run, voice.words, voice.clock
    parts: list[str] = []
    span = story.cause
    match story.kind:
        case DueKind.missed | DueKind.late:
            kind = None if span is None else span.kind
            template = CAUSES[(story.kind, kind)]
            if span is None:
                parts.append(words(template))
            else:
                where = words("{start}-{end}", start=clock(span.start), end=clock(span.end))
                parts.append(words(template, span=where))
            if story.kind is DueKind.missed:
                parts.append(_served(story.served_by, voice))
                if story.unlisted:
                    more = "and {count} more before it, counted and not listed"
                    parts.append(words(more, count=story.unlisted))
            else:
                parts.append(_ran(run, voice))
        case DueKind.skipped:
            parts.append(words("skipped: {reason}", reason=voice.reason(run.reason or "")))
        case DueKind.waiting:
            since = clock(run.fired_at or story.due)
            what = _what(story.waited_for, words)
            return words("waiting for {what} since {time}", what=what, time=since)
        case DueKind.waited:
            wait = span_words(story.waited or timedelta(0), words)
            what = _what(story.waited_for, words)
            parts.append(words("waited {wait} for {what}", wait=wait, what=what))
            parts.append(_ran(run, voice))
        case DueKind.on_time:
            parts.append(words("on time"))
            parts.append(_ran(run, voice))
    if run.missed_count == 1 and story.kind is not DueKind.missed:
        parts.append(words("1 earlier due skipped"))
    elif run.missed_count and story.kind is not DueKind.missed:
        parts.append(words("{count} earlier dues skipped", count=run.missed_count))
    return "; ".join(part for part in parts if part)


def _what(waited_for: str | None, words: Words) -> str:
    """What a run waited for, in words: the gates' own things are translated, anything else
    (a condition of a later release) stays as recorded."""
    what = waited_for or "its conditions"
    return words(what) if what in WAITED_FOR else what


def _ran(run: Run, voice: Voice) -> str:
    at = run.started_at or run.fired_at
    if at is None:
        return ""
    words, time = voice.words, voice.clock(at)
    if run.status is RunStatus.running:
        return words("running since {time}", time=time)
    if run.status is RunStatus.succeeded:
        return words("ran at {time}", time=time)
    status = voice.status(run.status)
    if run.status is RunStatus.failed and run.reason:
        said = voice.reason(run.reason.rsplit("; ", 1)[-1])  # the job's end, after a gate's
        return words("ran at {time}, {status}: {reason}", time=time, status=status, reason=said)
    return words("ran at {time}, {status}", time=time, status=status)


def _served(served: Run | None, voice: Voice) -> str:
    words = voice.words
    if served is None:
        return words("not run since")
    at = served.started_at or served.fired_at
    assert at is not None
    time = voice.clock(at)
    if served.status is RunStatus.running:
        return words("ran once, running since {time}", time=time)
    # The fire that covered it may be a due of its own that came on time, not a catch-up.
    late = served.late or served.trigger is Trigger.catch_up
    if served.status is RunStatus.succeeded:
        return words(
            "ran once at {time}, late" if late else "ran once at {time}, on time", time=time
        )
    template = (
        "ran once at {time}, late, {status}" if late else "ran once at {time}, on time, {status}"
    )
    return words(template, time=time, status=voice.status(served.status))


@dataclass(frozen=True, slots=True)
class Lane:
    """One schedule over a stretch of time."""

    schedule_id: int
    name: str
    tz: str
    stories: tuple[DueStory, ...]
    """Its dues in the stretch, by due."""
    runs: tuple[Run, ...]
    """Its runs that ran (or wait) in the stretch, manual ones too."""
    window: Window | None = None
    """The hours its runs start within ("Only between"), shown as a band each night."""


@dataclass(frozen=True, slots=True)
class Timeline:
    """A stretch of time: the machine's spans and every schedule's dues and runs."""

    start: datetime
    end: datetime
    now: datetime
    machine: str
    spans: tuple[MachineSpan, ...]
    lanes: tuple[Lane, ...]
    pauses: tuple[Pause, ...] = ()
    """This machine's "Pause all" spans that overlap the stretch, each with its dues counted."""

    def pause_of(self, story: DueStory) -> Pause | None:
        """The pause ``story``'s due was skipped for (counted in it, not told by itself)."""
        if story.run.reason != SkipReason.paused.value:
            return None
        return next((pause for pause in self.pauses if pause.covers(story.due)), None)

    def story_of(self, run_id: int) -> DueStory | None:
        for lane in self.lanes:
            for story in lane.stories:
                if story.run.id == run_id:
                    return story
        return None

    def dues(self) -> list[DueStory]:
        return [story for lane in self.lanes for story in lane.stories]

    def paused_folded(self) -> Timeline:
        """This stretch with the dues a pause kept from running left to the pause, which
        counts them (what the Timeline window draws: one band, not a tick per due)."""
        if not self.pauses:
            return self
        lanes = tuple(
            replace(lane, stories=tuple(s for s in lane.stories if self.pause_of(s) is None))
            for lane in self.lanes
        )
        return replace(self, lanes=lanes)


PAUSE_WORDS = (
    "Paused all schedules {start} – {end} ({dues})",
    "Paused all schedules since {start} ({dues})",
    "{count} dues not run",
    "1 due not run",
    "no due fell in it",
)
"""The templates of ``pause_line``, for the catalogs."""


def pause_line(
    pause: Pause, words: Words, when: Callable[[datetime], str], clock: Callable[[datetime], str]
) -> str:
    """``Paused all schedules Tue 14:00 – 16:30 (3 dues not run)``: a pause in one line, its
    dues counted in it. ``when`` writes its start in full, ``clock`` its end near the start."""
    if pause.dues == 0:
        dues = words("no due fell in it")
    elif pause.dues == 1:
        dues = words("1 due not run")
    else:
        dues = words("{count} dues not run", count=pause.dues)
    if pause.end is None:
        return words("Paused all schedules since {start} ({dues})", start=when(pause.start),
                     dues=dues)  # fmt: skip
    return words("Paused all schedules {start} – {end} ({dues})", start=when(pause.start),
                 end=clock(pause.end), dues=dues)  # fmt: skip
