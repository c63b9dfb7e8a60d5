"""``schedule.skip`` and ``schedule.snooze`` (with ``undo``), and the ``at`` of a one-off in
``schedule.create``/``schedule.update``: the front door's side of ``scheduler.oneoff``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from domi_desktop.errors import ParamError
from domi_desktop.frontdoor.wire import get_param, id_param, iso
from domi_desktop.model import Hold, Policies, Schedule
from domi_desktop.ports import Clock
from domi_desktop.scheduler.oneoff import OneOffError, done, live_hold, once_at_from
from domi_desktop.scheduler.oneoff import skip_next as _skip_next
from domi_desktop.scheduler.oneoff import snooze_next as _snooze_next

Json = dict[str, Any]


class Service(Protocol):
    """What a skip or a snooze needs of the service (``service.Service``)."""

    clock: Clock

    def schedule(self, schedule_id: int) -> Schedule: ...

    def schedule_json(self, schedule: Schedule, lang: str = "en") -> Json: ...

    def store_update(self, schedule_id: int, policies: Policies) -> Schedule: ...


MAX_SNOOZE = timedelta(days=366)


def one_off(params: Mapping[str, Any], tz: str, now: datetime) -> tuple[str, datetime] | None:
    """The expression and instant of ``at`` (``2026-12-24T07:00``, read in ``tz`` unless it
    carries an offset), or None when no ``at`` is given."""
    text = get_param(params, "at", str)
    if text is None:
        return None
    try:
        wall = datetime.fromisoformat(text)
    except ValueError:
        raise ParamError(
            "at", f"{text!r} is not a date and time such as 2026-12-24T07:00"
        ) from None
    try:
        at, expr = once_at_from(wall, tz, now)
    except OneOffError as error:
        raise ParamError("at", str(error).removeprefix("--at: ")) from None
    return expr, at


def hold_json(schedule: Schedule) -> Json:
    """What lists and the CLI show of a schedule's one-off and hold."""
    hold = live_hold(schedule)
    return {
        "once_at": iso(schedule.policies.once_at),
        "done": done(schedule),
        "skipping": iso(hold.due) if hold is not None and hold.skip else None,
        "snoozed": None
        if hold is None or hold.until is None
        else {"due": iso(hold.due), "until": iso(hold.until)},
    }


def skip(service: Service, params: Mapping[str, Any]) -> Json:
    return _set(service, params, _skip_next)


def snooze(service: Service, params: Mapping[str, Any]) -> Json:
    seconds = get_param(params, "seconds", (int, float))
    undo = bool(get_param(params, "undo", bool))
    if not undo:
        if seconds is None or isinstance(seconds, bool):
            raise ParamError("seconds", "say how long to snooze, such as 3600")
        if not 0 < seconds <= MAX_SNOOZE.total_seconds():
            raise ParamError("seconds", f"must be between 1 and {MAX_SNOOZE.days} days")
    span = timedelta(seconds=seconds or 0)
    return _set(service, params, lambda schedule, now: _snooze_next(schedule, now, span))


def _set(
    service: Service, params: Mapping[str, Any], make: Callable[[Schedule, datetime], Hold]
) -> Json:
    schedule_id = id_param(params)
    assert schedule_id is not None
    undo = bool(get_param(params, "undo", bool))
    schedule = service.schedule(schedule_id)
    now = service.clock.now()
    hold: Hold | None = None
    if not undo:
        try:
            hold = make(schedule, now)
        except OneOffError as error:
            raise ParamError("id", str(error)) from None
    policies: Policies = replace(schedule.policies, hold=hold)
    changed = service.store_update(schedule_id, policies)
    return {**service.schedule_json(changed), **hold_json(changed)}
