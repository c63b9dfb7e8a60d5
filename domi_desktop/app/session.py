"""Session triggers wired to a running host: the app's start in a session (login), the
session's unlock, the machine's wake and its way to sleep each run the schedules that ask for
the moment (``runtime.session``).

Before sleep the jobs run under a delay lock (logind's ``delay`` inhibitor, taken while any
schedule asks for ``before_sleep``): the lock is given back once they have ended, or once they
have been stopped when they would outlast ``SLEEP_BUDGET`` (logind lets a delay lock hold a
sleep back ``InhibitDelayMaxSec``, 5 s by default). Windows gives about 2 s after
``PBT_APMSUSPEND``, without a lock: the jobs get 1.5 s there. macOS waits for the answer to
``NSWorkspaceWillSleepNotification`` about 30 s, but with no way to hold it (that needs IOKit's
``IORegisterForSystemPower`` and ``IOAllowPowerChange``, not written): the jobs get the Linux
budget, and what is still running then is stopped.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from domi_desktop.model import Trigger, WakeReason
from domi_desktop.platform.inhibit import delay_inhibitor_for_platform
from domi_desktop.ports import InhibitorHandle
from domi_desktop.runtime.session import SessionRuns
from domi_desktop.scheduler.session import wants

if TYPE_CHECKING:
    from domi_desktop.app.host import Host

log = logging.getLogger(__name__)

SLEEP_BUDGET_MS = 1500 if sys.platform == "win32" else 3500
"""How long jobs that run before sleep may take before they are stopped."""
STOP_GRACE_MS = 1000
"""After the stop, how long their ends are waited for before the sleep goes ahead anyway."""
POLL_MS = 50
DELAY_WHY = "run the jobs that run before sleep"
SLEPT = "stopped: the machine went to sleep"


class HostSessionTriggers:
    """Started after the host, stopped before it."""

    def __init__(self, host: Host) -> None:
        from domi_desktop.platform.resume import resume_source_for_platform
        from domi_desktop.platform.session import unlock_source_for_platform

        self._host = host
        self.runs = SessionRuns(host.runtime)
        self._resume: Any = resume_source_for_platform()
        self._unlock = unlock_source_for_platform()
        self._delay = delay_inhibitor_for_platform()
        self._held: InhibitorHandle | None = None
        self._logged_in = False
        self._sleep_timer = QTimer()
        self._sleep_timer.setInterval(POLL_MS)
        self._sleep_timer.timeout.connect(self._sleep_progress)
        self._sleeping_since = 0.0
        self._stopped = False
        self._listening: set[str] = set()
        host.woke.connect(self._woke)

    def stop(self) -> None:
        self._host.woke.disconnect(self._woke)
        self._sleep_timer.stop()
        self._resume.stop()
        self._unlock.stop()
        self._release()

    def _asked(self) -> set[Trigger]:
        """The moments of the session some enabled schedule asks for; asked at each wake, so
        the schedules that ask for none (nearly all of 10,000) are passed over at one look."""
        sessions = [
            s.policies.session
            for s in self._host.runtime.known_schedules().values()
            if s.enabled and s.policies.session.any
        ]
        return {
            trigger
            for session in sessions
            for trigger in (Trigger.unlock, Trigger.resume, Trigger.before_sleep)
            if wants(session, trigger)
        }

    def _listen_if_asked(self, asked: set[Trigger]) -> None:
        self._switch("unlock", self._unlock, Trigger.unlock in asked, self._start_unlock)
        # A resume source of its own beside the host's: it reports the same signals to us alone.
        self._switch("sleep", self._resume, bool(asked - {Trigger.unlock}), self._start_resume)

    def _switch(self, name: str, source: Any, needed: bool, start: Callable[[], bool]) -> None:
        if needed and name not in self._listening:
            self._listening.add(name)
            started = start()
            log.info("session triggers: %s%s", "" if started else "no signal: ", source.status)
        elif not needed and name in self._listening:
            self._listening.discard(name)
            source.stop()

    def _start_unlock(self) -> bool:
        return self._unlock.start(self._host.on_loop(self._unlocked))

    def _start_resume(self) -> bool:
        on_loop = self._host.on_loop
        return bool(self._resume.start(on_loop(self._resumed), on_loop(self._sleeping)))

    def _unlocked(self) -> None:
        self._fire(Trigger.unlock)

    def _fire(self, trigger: Trigger) -> int:
        count = self.runs.fire(trigger, self._sleep_progress)
        if count:
            log.info("%s: %d schedule(s) run", trigger.value, count)
        return count

    def _woke(self, _plan: object, reason: str) -> None:
        if reason == WakeReason.start and not self._logged_in:
            # The first wake has read the schedules: the app's start in this session.
            self._logged_in = True
            self._fire(Trigger.login)
        asked = self._asked()
        self._listen_if_asked(asked)
        self._hold_if_asked(asked)

    def _resumed(self) -> None:
        self._sleep_timer.stop()
        self._hold_if_asked(self._asked())
        self._fire(Trigger.resume)

    def _hold_if_asked(self, asked: set[Trigger]) -> None:
        """The delay lock is held while some schedule runs before sleep, and only then."""
        if Trigger.before_sleep not in asked:
            self._release()
        elif self._held is None and self._delay is not None:
            self._held = self._delay.acquire(DELAY_WHY)

    def _sleeping(self) -> None:
        self._sleeping_since, self._stopped = time.monotonic(), False
        if not self._fire(Trigger.before_sleep):
            self._release()
            return
        self._sleep_timer.start()

    def _sleep_progress(self) -> None:
        """While jobs run before sleep: the lock goes when they have ended; past the budget
        they are stopped, and past the grace the sleep goes ahead anyway."""
        if not self._sleep_timer.isActive():
            return
        waited_ms = (time.monotonic() - self._sleeping_since) * 1000
        running = self.runs.running(Trigger.before_sleep)
        pending = self.runs.recording.get(Trigger.before_sleep, 0)
        if not running and not pending:
            self._sleep_timer.stop()
            self._release()
            return
        if waited_ms >= SLEEP_BUDGET_MS and not self._stopped:
            self._stopped = True
            for run_id in running:
                log.info("run %s: %s", run_id, SLEPT)
                self._host.runtime.stop_run(run_id, SLEPT)
        if waited_ms >= SLEEP_BUDGET_MS + STOP_GRACE_MS:
            self._sleep_timer.stop()
            log.warning("before sleep: %s run(s) had not ended; sleeping anyway", len(running))
            self._release()

    def _release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()


def start_session_triggers(host: Host) -> HostSessionTriggers:
    """Its sources start at the first wake, when the schedules that ask for them are known,
    and each is listened to only while some schedule asks for its moment."""
    return HostSessionTriggers(host)
