"""The pure gate of a due run: may it start now, given what the OS says of the machine?

A condition is an input to the decision: the runtime hands ``gate`` a ``SystemState`` read by a
``ports.ConditionSource`` adapter, and the instants it needs; nothing here reads a clock or the OS.

How the runtime uses it (the integration):

* At claim time, after the planner's ``FireDecision`` says *run* and before the action starts, the
  runtime calls ``gate(schedule.conditions, action.kind, source.current(), due, now, last_success)``
  (``last_success``: the ``finished_at`` of the schedule's latest succeeded run). Manual runs are
  not gated: a person asked for them.
* ``run``: start as today. ``run_anyway``: start, and record ``gate.reason`` on the run.
  ``skip``: record the run as skipped with ``gate.reason``. ``wait``: record the run with status
  ``waiting`` and ``gate.reason``; it keeps its ``due`` (and ``late``, ``missed_count``), and the
  claim of ``last_due`` happens now, as for any fire: a waiting run is a run, so exactly once holds.
* At every later wake the runtime re-gates each waiting run with its own ``due``; when the verdict
  is no longer ``wait`` the same row turns ``running`` (``started_at`` now, ``late`` when
  ``now - due > GRACE``) or ``skipped``. A waiting run is never claimed twice: it is a row, not a
  fire.
* The driver's next wake is ``min(next fire, gate.until of each waiting run, now + RECHECK)``:
  ``RECHECK`` is 60 s, so a wait costs at most one wake a minute, and ``until`` is the instant at
  which time alone changes the verdict (the deadline, or the metered allowance).
  ``ConditionSource.start(on_change)`` wires the OS's change signals to a wake (reason
  ``condition``), so a job starts within moments of the charger or the network coming back.
* While a run with ``stop_if_lost`` is running, each ``on_change`` calls
  ``lost(conditions, kind, source.current(), at_start=state_at_start)``: a reason means stop the
  job's process tree, record the run ``interrupted`` with that reason, and insert one new
  ``waiting`` run with the same ``due`` (trigger ``resumed``, ``resumed_from`` the stopped run).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from domi_desktop.errors import ParamError
from domi_desktop.model import Conditions, NetworkState, OnDeadline, SystemState
from domi_desktop.scheduler.resources import (
    check_resources,
    gone,
    mount_point,
    on_network,
    waited_for,
)

RECHECK = timedelta(seconds=60)
"""The longest a waiting run goes without being looked at again, signal or not."""


AWAY_RECHECK = timedelta(seconds=5)
"""How soon a run waiting for the user to step away looks again when time alone cannot tell (an
app holds off the screensaver, or the idle time is unknown)."""


class Verdict(Enum):
    run = "run"
    wait = "wait"
    skip = "skip"
    run_anyway = "run_anyway"
    """The deadline passed with a condition still unmet, and the schedule runs anyway."""


class Need(Enum):
    """A condition the machine does not meet."""

    network = "network"
    unmetered = "unmetered"
    charger = "charger"
    battery = "battery"
    volume = "volume"
    network_name = "network_name"
    path_exists = "path_exists"
    window = "window"
    """Outside the schedule's hours (``scheduler.window``); ``Unmet.name`` is the window."""
    away = "away"
    """The user is at the computer (``scheduler.away``)."""


RESOURCES = (Need.volume, Need.network_name, Need.path_exists)
"""The needs named by a ``Conditions`` field of the same name (``scheduler.resources``)."""


@dataclass(frozen=True, slots=True)
class Unmet:
    need: Need
    network: NetworkState | None = None
    """For ``network``: what the OS said instead of online."""
    battery_percent: int | None = None
    """For ``battery``: the charge now, and the level waited for."""
    minimum: int | None = None
    name: str | None = None
    """For a resource: the disk, network or path, as the schedule names it."""
    hidden: bool = False
    """For ``network_name``: the OS hid the Wi-Fi names from the app, so it cannot tell."""


@dataclass(frozen=True, slots=True)
class Gate:
    """The verdict on a due run, with what it waited for (recorded in words by ``describe_gate``,
    said in the app's language by ``ui.condition_words``)."""

    verdict: Verdict
    unmet: tuple[Unmet, ...] = ()
    until: datetime | None = None
    """When time alone changes the verdict (the deadline or the metered allowance); ``None``
    when only the machine can."""
    waited: timedelta | None = None
    """For ``run_anyway`` and ``skip``: the wait that ran out."""
    metered_allowance: timedelta | None = None
    """For ``run`` on a metered connection: the time without a success that allowed it."""
    said: str | None = None
    """The whole reason, when the unmet needs do not tell it (a window that ended unused)."""

    @property
    def reason(self) -> str | None:
        """The English words recorded on the run; ``None`` for a plain ``run``."""
        return describe_gate(self)


def needs_network(conditions: Conditions, action_kind: str) -> bool:
    """An HTTP action needs the network unless the schedule says otherwise."""
    if conditions.requires_network is not None:
        return conditions.requires_network
    return action_kind == "http"


def unmet(conditions: Conditions, action_kind: str, state: SystemState) -> tuple[Unmet, ...]:
    """The conditions ``state`` does not meet, in a fixed order (network, metered, power)."""
    found: list[Unmet] = []
    if needs_network(conditions, action_kind) and state.network not in (
        NetworkState.online,
        NetworkState.unknown,
    ):
        found.append(Unmet(Need.network, network=state.network))
    if conditions.unmetered_only and state.metered is True:
        found.append(Unmet(Need.unmetered))
    if not state.on_ac:
        if conditions.on_ac_power:
            found.append(Unmet(Need.charger))
        elif (
            conditions.min_battery_percent is not None
            and state.battery_percent is not None
            and state.battery_percent < conditions.min_battery_percent
        ):
            found.append(
                Unmet(
                    Need.battery,
                    battery_percent=state.battery_percent,
                    minimum=conditions.min_battery_percent,
                )
            )
    if conditions.volume is not None and mount_point(conditions.volume, state) is None:
        found.append(Unmet(Need.volume, name=conditions.volume))
    if conditions.network_name is not None and not on_network(conditions.network_name, state):
        found.append(
            Unmet(
                Need.network_name,
                name=conditions.network_name,
                hidden=state.network_names_hidden,
            )
        )
    if conditions.path_exists is not None and conditions.path_exists not in state.paths:
        found.append(Unmet(Need.path_exists, name=conditions.path_exists))
    if conditions.away is not None and not stepped_away(conditions.away, state):
        found.append(Unmet(Need.away))
    return tuple(found)


def stepped_away(threshold: timedelta, state: SystemState) -> bool:
    """Nobody touched the computer for ``threshold`` and no app holds off the screensaver; an
    idle time the session cannot tell is not away."""
    return not state.presenting and state.idle is not None and state.idle >= threshold


def away_at(conditions: Conditions, state: SystemState, now: datetime) -> datetime | None:
    """When time alone makes the user away, if nobody touches the computer meanwhile."""
    if conditions.away is None or state.presenting or state.idle is None:
        return None
    return now + max(timedelta(0), conditions.away - state.idle)


def gate(
    conditions: Conditions,
    action_kind: str,
    state: SystemState,
    due: datetime,
    now: datetime,
    last_success: datetime | None,
) -> Gate:
    """May the run due at ``due`` start at ``now``? ``last_success`` is the end of the schedule's
    latest successful run (``None``: never, and the metered allowance counts from ``due``)."""
    missing = unmet(conditions, action_kind, state)
    changes: list[datetime] = []
    allowance = conditions.metered_after if conditions.unmetered_only else None
    if allowance is not None and any(item.need is Need.unmetered for item in missing):
        allowed_at = (last_success or due) + allowance
        if now >= allowed_at:
            missing = tuple(item for item in missing if item.need is not Need.unmetered)
            if not missing:
                return Gate(Verdict.run, metered_allowance=allowance)
        else:
            changes.append(allowed_at)
    if not missing:
        return Gate(Verdict.run)
    if any(item.need is Need.away for item in missing):
        # No desktop tells of the end of a presentation: it is looked at again soon.
        changes.append(away_at(conditions, state, now) or now + AWAY_RECHECK)
    if conditions.wait_at_most is not None:
        deadline = due + conditions.wait_at_most
        if now >= deadline:
            verdict = (
                Verdict.run_anyway if conditions.on_deadline is OnDeadline.run else Verdict.skip
            )
            return Gate(verdict, missing, waited=conditions.wait_at_most)
        changes.append(deadline)
    return Gate(Verdict.wait, missing, until=min(changes, default=None))


def lost(
    conditions: Conditions, action_kind: str, state: SystemState, *, at_start: SystemState
) -> str | None:
    """Why a running job with ``stop_if_lost`` must stop: a condition that held when it started
    (``at_start``) no longer does. A run that started anyway, or metered by the allowance, is not
    stopped for what it never had."""
    if not conditions.stop_if_lost:
        return None
    before = {item.need for item in unmet(conditions, action_kind, at_start)}
    # Coming back to the computer is ``away.on_return``'s, not a lost condition.
    went = [
        item
        for item in unmet(conditions, action_kind, state)
        if item.need not in before and item.need not in (Need.away, Need.window)
    ]
    if not went:
        return None
    return "stopped: " + join_words([_lost_words(item) for item in went])


def _lost_words(item: Unmet) -> str:
    if item.need in RESOURCES:
        return gone(item.need.value, item.name or "")
    return _LOST[item.need]


_LOST = {
    Need.network: "the network went away",
    Need.unmetered: "the connection became metered",
    Need.charger: "the charger was unplugged",
    Need.battery: "the battery ran low",
    Need.away: "you came back to the computer",
    Need.window: "its window ended",
}


# -- words -----------------------------------------------------------------------------------------


def check_conditions(conditions: Conditions, where: str = "conditions") -> None:
    """``ParamError`` naming the field of ``conditions`` that cannot be used."""
    level = conditions.min_battery_percent
    if level is not None and not 1 <= level <= 100:
        raise ParamError(f"{where}.min_battery_percent", f"must be within 1..100, not {level}")
    for name in ("metered_after", "wait_at_most", "away"):
        span = getattr(conditions, name)
        if span is not None and span <= timedelta(0):
            raise ParamError(f"{where}.{name}", f"must be longer than zero, not {span}")
    if conditions.metered_after is not None and not conditions.unmetered_only:
        raise ParamError(f"{where}.metered_after", "only means something with unmetered_only")
    check_resources(conditions, where)


def format_span(span: timedelta) -> str:
    """``6 hours``, ``1 day 2 hours``, ``90 seconds`` -> ``1 minute 30 seconds``: the words of a
    run's recorded reason (English, as the log; the app says them in its language from the
    values, ``ui.condition_words``)."""
    seconds = int(span.total_seconds())
    parts: list[str] = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}{'' if count == 1 else 's'}")
    return " ".join(parts) if parts else "0 seconds"


def describe_unmet(item: Unmet) -> str:
    if item.need is Need.network:
        if item.network is NetworkState.portal:
            return "the network (behind a captive portal)"
        if item.network is NetworkState.limited:
            return "the network (local network only)"
        return "the network"
    if item.need is Need.unmetered:
        return "an unmetered network"
    if item.need is Need.charger:
        return "the charger"
    if item.need is Need.window:
        return f"the window {item.name}"
    if item.need is Need.away:
        return "you to step away"
    if item.need in RESOURCES:
        what = waited_for(item.need.value, item.name or "")
        if item.hidden:
            what += " (macOS tells the Wi-Fi name only to apps allowed Location Services)"
        return what
    return f"the charger (battery {item.battery_percent} % < {item.minimum} %)"


def describe_gate(gate: Gate) -> str | None:
    """The reason recorded on a waiting, skipped or run-anyway run: "waiting for the network"."""
    if gate.said is not None:
        return gate.said
    what = join_words([describe_unmet(item) for item in gate.unmet])
    if gate.verdict is Verdict.wait:
        return f"waiting for {what}"
    if gate.verdict is Verdict.run:
        if gate.metered_allowance is None:
            return None
        span = format_span(gate.metered_allowance)
        return f"ran on a metered network after {span} without a successful run"
    span = format_span(gate.waited or timedelta(0))
    if gate.verdict is Verdict.run_anyway:
        return f"ran anyway after waiting {span} for {what}"
    return f"skipped after waiting {span} for {what}"


def join_words(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
