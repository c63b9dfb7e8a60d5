"""``schedule.timeline``: the machine's story and every due's over the last days, for
``domi-desktop timeline`` and RPC clients. Each due carries its one line in English, worded by
the same function the Timeline and History use (``story.dues.due_line``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, timedelta
from typing import Any

from domi_desktop.cron import local_zone
from domi_desktop.errors import DomiError, ParamError
from domi_desktop.frontdoor.wire import Json, get_param, id_param, iso
from domi_desktop.model import RunStatus
from domi_desktop.ports import Clock
from domi_desktop.store import Store
from domi_desktop.story import Pause
from domi_desktop.story.dues import DueStory, Timeline, Voice, clock_near, due_line, pause_line
from domi_desktop.timefmt import WEEKDAYS

MAX_DAYS = 92
"""A little more than the runs kept (``retention.MAX_AGE``)."""


def _english(template: str, **values: Any) -> str:
    return template.format(**values) if values else template


def _status(status: RunStatus) -> str:
    return status.value.replace("_", " ")


def _reason(reason: str) -> str:
    return reason.splitlines()[0] if reason else ""


def due_json(story: DueStory, zone: Any) -> Json:
    run = story.run
    voice = Voice(_english, clock_near(story.due, zone, WEEKDAYS), _status, _reason)
    return {
        "run_id": run.id,
        "due": iso(story.due),
        "kind": story.kind.value,
        "status": run.status.value,
        "line": due_line(story, voice),
    }


def pause_json(pause: Pause, zone: Any) -> Json:
    def when(moment: Any) -> str:
        local = moment.astimezone(zone)
        return f"{WEEKDAYS[local.weekday()]} {local:%Y-%m-%d %H:%M}"

    return {
        "start": iso(pause.start),
        "end": None if pause.end is None else iso(pause.end),
        "dues": pause.dues,
        "line": pause_line(pause, _english, when, clock_near(pause.start, zone, WEEKDAYS)),
    }


def timeline_json(timeline: Timeline) -> Json:
    try:
        zone: Any = local_zone()
    except DomiError:
        zone = UTC
    return {
        "machine": timeline.machine,
        "start": iso(timeline.start),
        "end": iso(timeline.end),
        "spans": [
            {
                "kind": span.kind.value,
                "start": iso(span.start),
                "end": iso(span.end),
                "source": span.source.value,
            }
            for span in timeline.spans
            if span.end > timeline.start and span.start < timeline.end
        ],
        "schedules": [
            {
                "id": lane.schedule_id,
                "name": lane.name,
                "tz": lane.tz,
                # A due a pause kept from running is counted in the pause, not told alone.
                "dues": [
                    due_json(story, zone)
                    for story in lane.stories
                    if timeline.pause_of(story) is None
                ],
            }
            for lane in timeline.lanes
        ],
        "pauses": [pause_json(pause, zone) for pause in timeline.pauses],
    }


def timeline(store: Store, clock: Clock, params: Mapping[str, Any]) -> Json:
    schedule_id = id_param(params, "schedule_id", required=False)
    days = get_param(params, "days", int)
    days = 7 if days is None else days
    if not 1 <= days <= MAX_DAYS:
        raise ParamError("days", f"must be between 1 and {MAX_DAYS}, not {days}")
    now = clock.now()
    return timeline_json(store.timeline(now - timedelta(days=days), now, now, schedule_id))
