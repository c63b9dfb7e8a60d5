""" "When the running jobs finish, put the computer to sleep, unless I came back."

Armed by the user (the tray's action); on the engine's thread. When the last running job ends (at
once when none runs), the machine is put to sleep through the same means that send a machine the
app woke back to sleep (``WakeTools``: logind's ``Suspend``, ``/sys/power/state``...), once, and
only if nobody used it meanwhile: the same input watch decides. Input within ``LEAVE`` of the
arming is not held against it: that is the person walking away (and the desktop's idle delay,
after which logind says the session is idle). Anything it cannot tell counts as someone there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from domi_desktop.events import Event, RunFinished
from domi_desktop.runtime.waking import WakeTools

log = logging.getLogger(__name__)

LEAVE = timedelta(minutes=10)
"""After arming, the time to walk away: input before then does not keep the machine up."""


class SleepWhenDone:
    def __init__(
        self,
        running: Callable[[], Sequence[int]],
        tools: Callable[[], WakeTools],
        now: Callable[[], datetime],
        soon: Callable[[Callable[[], None]], object],
    ) -> None:
        """``running``: the runs in progress; ``soon``: run a callable on the engine's loop after
        the current event (a run's end is told before its lane is free)."""
        self._running, self._tools, self._now, self._soon = running, tools, now, soon
        self.armed_at: datetime | None = None
        self.outcome = "not armed"
        """What became of the last arming, for the log, the status and tests."""
        self.slept = 0

    def set(self, on: bool) -> None:
        if not on:
            if self.armed_at is not None:
                self.outcome = "cancelled"
            self.armed_at = None
            return
        self.armed_at = self._now()
        self.outcome = "armed: waiting for the running jobs to finish"
        watch = self._tools().watch
        if watch is not None:
            watch.mark()
        self._soon(self._look)

    def observe(self, event: Event) -> None:
        """A runtime listener: a run's end may be the last one's."""
        if self.armed_at is not None and isinstance(event, RunFinished):
            self._soon(self._look)

    def _look(self) -> None:
        armed = self.armed_at
        if armed is None or self._running():
            return
        self.armed_at = None
        tools = self._tools()
        watch, sleeper = tools.watch, tools.sleeper
        if watch is None or sleeper is None:
            self.outcome = "the jobs finished; this machine has no way to be put to sleep"
        else:
            touched = watch.input_since_mark(armed + LEAVE)
            if touched is not False:
                self.outcome = "the jobs finished; the computer stays awake: " + (
                    "someone used it" if touched else f"cannot tell ({watch.status})"
                )
            else:
                self.slept += 1
                done = sleeper.sleep()
                self.outcome = "the jobs finished: asked to sleep" + (
                    "" if done else f", refused ({sleeper.status})"
                )
        log.info("sleep when done: %s", self.outcome)
