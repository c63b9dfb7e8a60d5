"""Wake to run: the OS's wake alarm kept at the instant of the pure wake plan
(``scheduler.wake``), the runs of a wake the app caused told so in their history, and the machine
sent back to sleep once they end, when nobody touched it meanwhile.

How it fits: ``woke`` is called after every wake of the driver (start-up, its tick, a resume, a clock
jump, a zone change, an edit, a fire claimed), so the alarm follows every change; only a change of
instant reaches the OS. ``observe`` is a runtime listener: it sees the fires and the ends of runs.

A wake is ours when the scheduler notices a sleep (a ``resume`` or a ``clock_jump``: the wall clock
ran while the monotonic one stood) at or after the armed instant, before its due is long past. The
runs of the schedules due then are the woken runs ("woke the computer to run" on their row). When
the last of them has ended, nothing else runs, and the next wake is not minutes away, the machine
goes back to sleep after ``SETTLE``, unless input arrived since the last look before the sleep
(``InputWatch``: logind's idle hint, or the input devices' events where there is no logind).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

from domi_desktop.events import Event, FireEvent, RunFinished, RunWaiting
from domi_desktop.model import Schedule, SystemState, WakeReason
from domi_desktop.ports import (
    Clock,
    InhibitorHandle,
    InputWatch,
    Loop,
    Sleeper,
    SleepInhibitor,
    TimerHandle,
    WakeAlarm,
)
from domi_desktop.runtime.alerts import NOTE_END
from domi_desktop.scheduler.decide import WakePlan
from domi_desktop.scheduler.driver import WakeRecord
from domi_desktop.scheduler.wake import LEAD, WakeTarget, wake_plan

log = logging.getLogger(__name__)

WOKE_NOTE = "woke the computer to run"
"""Recorded on a woken run's row (its reason), before anything else said of it."""
EARLY = timedelta(seconds=5)
"""A resume this much before the armed instant still counts as ours (the RTC has whole seconds)."""
GIVE_UP = timedelta(minutes=10)
"""After the due by this much, a woken schedule that did not fire (edited, paused) is not waited
for."""
NOTICE = timedelta(minutes=2)
"""A resume noticed up to this long after the alarm rang is ours (without logind the scheduler
sees it at its next tick, a minute at most); a later one was a person's (the alarm did not ring),
and its runs do not say the app woke the computer."""
MIN_NAP = timedelta(minutes=2)
"""The next wake sooner than this: stay awake for it rather than sleep and wake again."""
SETTLE = 5.0
"""Seconds between the last woken run's end and the sleep: its record is written meanwhile."""
HOLD_WHY = "the computer was woken to run a schedule"

_SLEPT = (WakeReason.resume, WakeReason.clock_jump)


class WakeHost(Protocol):
    """What the wake keeper needs of the runtime (``engine.Runtime``)."""

    clock: Clock
    loop: Loop

    def known_schedules(self) -> dict[int, Schedule]: ...

    def not_here(self) -> dict[int, str]: ...

    def running_runs(self) -> list[int]: ...


class Notes(Protocol):
    """The conditions keeper's notes on runs (``gates.ConditionKeeper``)."""

    def noted(self, run_id: int, note: str) -> None: ...

    def reason(self, run_id: int, reason: str | None) -> str | None: ...


@dataclass(frozen=True, slots=True)
class WakeTools:
    """The OS's means: the alarm, and (to send a woken machine back to sleep) the watch on input
    and the sleeper; without either, a woken machine is left awake."""

    alarm: WakeAlarm
    watch: InputWatch | None = None
    sleeper: Sleeper | None = None


class NoWakeAlarm:
    """The alarm of a machine that cannot be woken by us: ``capability`` and ``status`` say why."""

    def __init__(self, reason: str) -> None:
        self._reason = reason

    @property
    def status(self) -> str:
        return self._reason

    def capability(self) -> str | None:
        return self._reason

    def arm(self, at: datetime) -> bool:
        return False

    def cancel(self) -> None:
        pass


@dataclass
class _Woken:
    target: WakeTarget
    resumed_at: datetime
    noted: bool = True
    """False for the wakes it stayed up for: the machine was awake already."""
    fired: set[int] = field(default_factory=set)
    runs: set[int] = field(default_factory=set)


class WakeKeeper:
    def __init__(
        self,
        host: WakeHost,
        tools: Callable[[], WakeTools],
        *,
        state: Callable[[], SystemState],
        paused: Callable[[], bool],
        notes: Notes,
        last_wake: Callable[[], WakeRecord | None] = lambda: None,
        inhibitor: SleepInhibitor | None = None,
        lead: timedelta = LEAD,
    ) -> None:
        """``tools`` are made when a schedule first asks for a wake (finding them asks the OS);
        ``state`` reads the machine's power and network for the plan; ``inhibitor`` (the
        runtime's: one execution state per thread on Windows) holds the woken machine awake
        until its runs end, as the OS would otherwise sleep an unattended machine again."""
        self._host = host
        self._make_tools = tools
        self._tools: WakeTools | None = None
        self._state = state
        self._paused = paused
        self._notes = notes
        self._last_wake = last_wake
        self._inhibitor = inhibitor
        self._held: InhibitorHandle | None = None
        self._lead = lead
        self.armed: WakeTarget | None = None
        self._alarm_at: datetime | None = None
        """The instant the OS's alarm is set at."""
        self.woken: _Woken | None = None
        self._settling: TimerHandle | None = None
        self.slept = 0
        """How many times it sent the machine back to sleep (for the log and the tests)."""

    @property
    def tools(self) -> WakeTools:
        if self._tools is None:
            try:
                self._tools = self._make_tools()
            except Exception as error:  # said once; the scheduler goes on without waking
                log.exception("cannot tell how to wake this machine")
                self._tools = WakeTools(
                    NoWakeAlarm(f"cannot tell how to wake this machine: {error}")
                )
        return self._tools

    def describe(self) -> dict[str, object]:
        """For ``app.status``: the wake armed (UTC instants), how, and whether this is one."""
        armed = self.armed
        return {
            "at": None if self._alarm_at is None else self._alarm_at.isoformat(),
            "due": None if armed is None else armed.due.isoformat(),
            "schedules": [] if armed is None else list(armed.schedule_ids),
            "alarm": None if self._tools is None else self._tools.alarm.status,
            "woken": self.woken is not None,
            "slept": self.slept,
        }

    # -- the driver's wakes --------------------------------------------------------------------

    def woke(self, plan: WakePlan, reason: WakeReason) -> None:
        try:
            self._woke(plan.now, reason)
        except Exception:  # waking is an extra: the scheduler's own wake must go on regardless
            log.exception("the wake alarm could not be planned")

    def _woke(self, now: datetime, reason: WakeReason) -> None:
        began = self._begin(now, reason)
        self.plan(now)
        if not began and self.woken is None and self.armed is not None:
            watch = self.tools.watch
            if watch is not None:
                # The last look before a sleep is the mark (the first as the alarm is armed: the
                # machine may sleep before the next): input after it keeps the machine awake.
                watch.mark()
        self._maybe_sleep(now)

    def _begin(self, now: datetime, reason: WakeReason) -> bool:
        """A woken session starts when the machine slept and woke at the armed instant, also
        when it had stayed up for that instant, or the last session had not yet settled, and
        it was put to sleep all the same."""
        armed, carried = self.armed, self.woken
        if reason not in _SLEPT or armed is None:
            return False
        if carried is not None and carried.noted and carried.target.due == armed.due:
            return False  # this wake's session: told twice of one resume
        # The alarm rang at the armed instant, or at the due when it was moved there (the machine
        # slept again in between).
        rang = [armed.at] if self._alarm_at is None else [armed.at, self._alarm_at]
        if not any(at - EARLY <= now <= at + NOTICE for at in rang):
            return False
        self.woken = _Woken(armed, now)
        if carried is not None and carried.target.due == armed.due:
            self.woken.fired, self.woken.runs = carried.fired, carried.runs
        if self._settling is not None:  # the last session's: this one settles by itself
            self._settling.cancel()
            self._settling = None
        self._hold()
        log.info(
            "the machine woke at %s for the wake armed at %s (schedules %s)",
            now.isoformat(), armed.at.isoformat(), list(armed.schedule_ids),
        )  # fmt: skip
        return True

    def plan(self, now: datetime) -> WakeTarget | None:
        """Arm the alarm at the plan's instant (or cancel it); the OS is told only of a change."""
        not_here = self._host.not_here()
        candidates = [
            schedule
            for schedule in self._host.known_schedules().values()
            if schedule.policies.wake_to_run and schedule.id not in not_here
        ]
        target = None
        if candidates:
            target = wake_plan(
                candidates, self._state(), now, lead=self._lead, paused=self._paused()
            )
        if (None if target is None else target.at) != self._alarm_at:
            self._set_alarm(target)
        if target is not None and self.armed is not None and target.due == self.armed.due:
            # Past its instant the alarm is moved to the due itself (should the machine sleep
            # again before it), but a wake for this due counts from when it was first armed.
            target = replace(target, at=min(target.at, self.armed.at))
        self.armed = target
        return target

    def _set_alarm(self, target: WakeTarget | None) -> None:
        alarm = self.tools.alarm
        if target is None:
            alarm.cancel()
            log.info("no wake alarm needed: cancelled")
        elif alarm.arm(target.at):
            log.info("%s, for schedules %s", alarm.status, list(target.schedule_ids))
        else:
            log.warning("cannot wake the machine: %s", alarm.status)
        self._alarm_at = None if target is None else target.at

    def _hold(self) -> None:
        if self._inhibitor is not None and self._held is None:
            self._held = self._inhibitor.acquire(HOLD_WHY)

    def _let_go(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()

    def close(self) -> None:
        self._let_go()
        if self._settling is not None:
            self._settling.cancel()
            self._settling = None
        if self._alarm_at is not None:
            self.tools.alarm.cancel()
            self._alarm_at = None
        self.armed = None

    # -- the runs of a woken wake -----------------------------------------------------------------

    def observe(self, event: Event) -> None:
        """A runtime listener: the fires and ends of the woken runs."""
        if self.woken is None and isinstance(event, FireEvent | RunWaiting):
            # Noticed at a wake that fires at once (the due had passed when the clock's jump was
            # seen): the driver tells its listeners before its ``woke``.
            record = self._last_wake()
            if record is not None:
                self._begin(record.at, record.reason)
        woken = self.woken
        if woken is None:
            return
        if isinstance(event, RunWaiting) and self._woken_for(woken, event):
            woken.fired.add(event.schedule_id)
            woken.runs.add(event.run_id)  # it starts later, with a FireEvent of its own
        elif isinstance(event, FireEvent) and self._woken_for(woken, event):
            woken.fired.add(event.schedule_id)
            if event.skipped is not None:
                return
            woken.runs.add(event.run_id)
            if woken.noted:
                earlier = self._notes.reason(event.run_id, None)
                note = WOKE_NOTE if earlier is None else f"{WOKE_NOTE}{NOTE_END}{earlier}"
                self._notes.noted(event.run_id, note)
        elif isinstance(event, RunFinished) and event.run_id in woken.runs:
            woken.runs.discard(event.run_id)
            self._maybe_sleep(self._host.clock.now())

    @staticmethod
    def _woken_for(woken: _Woken, event: FireEvent | RunWaiting) -> bool:
        return event.schedule_id in woken.target.schedule_ids and event.due == woken.target.due

    def _maybe_sleep(self, now: datetime) -> None:
        woken = self.woken
        if woken is None or woken.runs or self._settling is not None:
            return
        waited_out = now > woken.target.due + GIVE_UP
        if not waited_out and not woken.fired.issuperset(woken.target.schedule_ids):
            return
        # Let go now: the OS's own idle sleep may act (Windows, macOS), and logind refuses a
        # Suspend while an inhibitor of ours is still open.
        self._let_go()
        self._settling = self._host.loop.call_later(SETTLE, self._settle)

    def _settle(self) -> None:
        self._settling = None
        try:
            self._sleep_again()
        except Exception:  # an extra, on the loop: never the scheduler's trouble
            log.exception("the machine could not be sent back to sleep")

    def _sleep_again(self) -> None:
        woken = self.woken
        if woken is None or woken.runs:
            return
        now = self._host.clock.now()
        if self._host.running_runs():
            log.info("woken runs ended, others still run: the machine stays awake for now")
            return  # the next wake of the driver looks again
        upcoming = self.armed
        if upcoming is not None and upcoming.at - now < MIN_NAP:
            log.info("the next wake (%s) is too near to sleep before it", upcoming.at.isoformat())
            self.woken = _Woken(upcoming, woken.resumed_at, noted=False)
            self._hold()
            return
        self.woken = None
        watch, sleeper = self.tools.watch, self.tools.sleeper
        if watch is None or sleeper is None:
            log.info("the woken runs ended; the machine is left awake (no way to sleep it)")
            return
        touched = watch.input_since_mark(woken.resumed_at)
        if touched is not False:
            log.info(
                "the woken runs ended; the machine stays awake: %s",
                "someone used it" if touched else f"cannot tell ({watch.status})",
            )
            return
        log.info("the woken runs ended and nobody used the machine: back to sleep")
        self.slept += 1
        if not sleeper.sleep():
            log.warning("cannot put the machine back to sleep: %s", sleeper.status)
