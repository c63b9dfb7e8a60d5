"""The outside monitors wired to a running host: the engine's events, its wakes, the schedules it
runs, and the OS's sleep signal under a delay lock, so the checks are paused before the sleep."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from domi_desktop.cron import local_zone
from domi_desktop.errors import ZoneError
from domi_desktop.events import Event
from domi_desktop.frontdoor.settings import AppSettings, load_settings, settings_path
from domi_desktop.model import LOCAL_ZONE, Schedule, WakeReason
from domi_desktop.monitor import Monitoring, MonitorSettings
from domi_desktop.monitor.status import CheckStatus, PingTrial
from domi_desktop.platform.inhibit import delay_inhibitor_for_platform
from domi_desktop.ports import InhibitorHandle

if TYPE_CHECKING:
    from domi_desktop.app.host import Host

log = logging.getLogger(__name__)

DELAY_WHY = "pause the Healthchecks checks of this machine before it sleeps"

_running: weakref.WeakKeyDictionary[Host, HostMonitoring] = weakref.WeakKeyDictionary()


def monitor_settings(settings: AppSettings) -> MonitorSettings:
    return MonitorSettings(
        heartbeat_url=settings.heartbeat_url or None,
        healthchecks_key=settings.healthchecks_key or None,
        healthchecks_api=settings.healthchecks_api or None,
        heartbeat_period=timedelta(hours=settings.heartbeat_hours),
    )


def _zone_name() -> str:
    try:
        return getattr(local_zone(), "key", None) or LOCAL_ZONE
    except ZoneError:
        return LOCAL_ZONE  # refused with its reason by the Healthchecks export


class HostMonitoring:
    """Started after the host; stopped before it."""

    def __init__(self, host: Host) -> None:
        from domi_desktop.platform.resume import resume_source_for_platform

        self._host = host
        store = host.store
        self.monitoring = Monitoring(
            store.data_dir,
            machine=store.machine,
            seed=store.location,
            secrets=host.secrets,
            clock=host.clock,
            output_of=lambda run_id: store.get_run(run_id).output_tail,
            local_zone=_zone_name,
        )
        self._settings_path = settings_path(store.data_dir)
        self._settings_seen: float | None = -1.0  # not read yet
        self._read_settings()
        self._delay = delay_inhibitor_for_platform()
        self._held: InhibitorHandle | None = None
        self._holding = threading.Lock()
        self._pausing = False
        """Some schedule here has checks to pause: only then is sleep held back for them."""
        self.running = False
        self._resume: Any = resume_source_for_platform()
        self._unsubscribe = host.runtime.subscribe(self._event)
        host.woke.connect(self._woke)

    def start(self) -> None:
        self.running = True
        self.monitoring.start()
        # A source of its own, beside the host's: it reports the same signals to us alone.
        on_loop = self._host.on_loop
        if not self._resume.start(on_loop(self._resumed), on_loop(self._sleeping)):
            log.info(
                "monitors: no sleep signal here (%s); checks are not paused", self._resume.status
            )

    def stop(self) -> None:
        self.running = False
        self._resume.stop()
        self._unsubscribe()
        self._release()
        self.monitoring.stop()

    def _here(self) -> list[Schedule]:
        runtime = self._host.runtime
        elsewhere = runtime.not_here()
        return [
            s for s in runtime.known_schedules().values()
            if s.enabled and s.id not in elsewhere
        ]  # fmt: skip

    def _event(self, event: Event) -> None:
        schedule_id = getattr(event, "schedule_id", None)
        known = self._host.runtime.known_schedules()
        self.monitoring.observe(event, None if schedule_id is None else known.get(schedule_id))

    def _woke(self, _plan: object, reason: str) -> None:
        if reason in (WakeReason.start, WakeReason.edit, WakeReason.tz_change):
            here = self._here()
            self.monitoring.sync(here)
            self._pausing = any(s.policies.monitor.healthchecks_key for s in here)
            if self._pausing:
                self._hold()
            else:
                self._release()
        self._read_settings()
        self.monitoring.tick()

    def _read_settings(self) -> None:
        """The heartbeat's settings, again whenever the file changed (the Settings window saves
        it): one stat a wake, at most a minute apart."""
        try:
            seen: float | None = self._settings_path.stat().st_mtime
        except OSError:
            seen = None
        if seen != self._settings_seen:
            self._settings_seen = seen
            self.monitoring.settings = monitor_settings(load_settings(self._settings_path))

    def _sleeping(self) -> None:
        self.monitoring.going_to_sleep(self._here(), self._release)

    def _resumed(self) -> None:
        self._hold()
        self.monitoring.woke()

    def _hold(self) -> None:
        if self._pausing and self._delay is not None and self._held is None:
            held = self._delay.acquire(DELAY_WHY)
            with self._holding:
                self._held = held

    def _release(self) -> None:
        """Also from the sleep's waiting thread: closing the lock's fd is thread-safe."""
        with self._holding:
            held, self._held = self._held, None
        if held is not None:
            held.release()

    # -- what a window asks, on the engine's thread ---------------------------------------------

    def status(self, schedule_id: int) -> tuple[CheckStatus, ...]:
        schedule = self._host.runtime.known_schedules().get(schedule_id)
        return () if schedule is None else self.monitoring.status_of(schedule)

    def test_ping(self, schedule_id: int, done: Callable[[PingTrial], None]) -> None:
        schedule = self._host.runtime.known_schedules().get(schedule_id)
        if schedule is None:
            now = self._host.clock.now()
            done(PingTrial(now, error="this schedule is not run by this app"))
            return
        self.monitoring.test_ping(schedule, done)


def start_monitoring(host: Host) -> HostMonitoring:
    monitoring = HostMonitoring(host)
    monitoring.start()
    _running[host] = monitoring
    return monitoring


def monitoring_of(host: Host) -> HostMonitoring | None:
    """The host's monitors while they run; on the engine's thread."""
    found = _running.get(host)
    return found if found is not None and found.running else None
