"""Runs that wait for their window (``scheduler.window``): what the runtime saw of each window, so
that a window that ends unused says why, and which waiting runs may wait beside a later one.

Owned by the ``ConditionKeeper`` and used on its thread; the decisions are the pure ones.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from domi_desktop.cron import zone_for
from domi_desktop.model import Schedule, SystemState
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

_KEPT = timedelta(days=1)


class WindowKeeper:
    def __init__(self) -> None:
        self._tracks: dict[tuple[int, datetime], WindowTrack] = {}

    def stretch(self, schedule: Schedule, due: datetime) -> Stretch | None:
        window = schedule.policies.conditions.window
        if window is None:
            return None
        return served(schedule.expr, zone_for(schedule.tz), window, due)

    def gate(
        self,
        schedule: Schedule,
        state: SystemState,
        due: datetime,
        now: datetime,
        last_success: datetime | None,
    ) -> Gate:
        """The gate of the run due at ``due`` of a schedule with a window; each look inside the
        window is remembered (the runtime looks at least once a minute while awake), and the gaps
        between looks are said as sleeps when the window ends unused."""
        conditions = schedule.policies.conditions
        zone = zone_for(schedule.tz)
        stretch = self.stretch(schedule, due)
        key = (schedule.id, due)
        track = self._tracks.get(key, WindowTrack())
        said = ""
        if stretch is not None and now >= stretch.end:
            said = window_reason(stretch, zone, sleeps_seen(track, stretch), track.needs)
        verdict = window_gate(
            conditions, schedule.action.kind, state, stretch, now, last_success, said
        )
        if verdict.verdict is Verdict.wait and stretch is not None and stretch.holds(now):
            self._tracks[key] = observe(track, now, verdict.unmet)
        # Kept past the verdict (the same run is gated more than once a wake: its next wake,
        # then its release), and let go a day after its window.
        for old in [k for k, t in self._tracks.items() if t.awake and t.awake[-1][1] < now - _KEPT]:
            del self._tracks[old]
        return verdict

    def waits_beside(self, schedule: Schedule, older: datetime | None) -> bool:
        """Whether a waiting run due at ``older`` keeps waiting when a later due of its schedule
        comes: yes with a window, for each due serves a stretch of its own (a night that runs
        past the next midnight's due is not that due's); one whose window is over is skipped by
        its own gate, saying why, not replaced."""
        return older is not None and schedule.policies.conditions.window is not None
