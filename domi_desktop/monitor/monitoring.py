"""What the app tells the outside monitors, and when: runs, sleep and the machine's heartbeat.

Called on the loop thread; everything that touches the network happens on the worker's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from domi_desktop.errors import ExportError
from domi_desktop.events import Event, FireEvent, RunFinished
from domi_desktop.model import Schedule
from domi_desktop.monitor.intents import (
    HEALTHCHECKS_IO,
    Check,
    Intent,
    Kind,
    check_name,
    heartbeat_name,
    intents_for,
)
from domi_desktop.monitor.status import TEST_SIGNAL, CheckState, CheckStatus, PingTrial
from domi_desktop.monitor.worker import Worker, lane_of
from domi_desktop.ports import Clock, SecretStore

log = logging.getLogger(__name__)

HEARTBEAT_EVERY = timedelta(minutes=10)
"""How often an awake machine pings its heartbeat check."""
SLEEP_BUDGET = 4.0
"""Seconds the pauses may take on the way to sleep: logind's delay lock lasts 5 s by default."""


@dataclass(frozen=True, slots=True)
class MonitorSettings:
    """The app's own monitoring (its settings file): the machine's heartbeat check."""

    heartbeat_url: str | None = None
    """A ping URL of a check the user made for this machine."""
    healthchecks_key: str | None = None
    """The secret name of a project API key: domi makes the heartbeat check itself."""
    healthchecks_api: str | None = None
    heartbeat_period: timedelta = timedelta(days=3)
    heartbeat_grace: timedelta = timedelta(hours=1)


class Monitoring:
    def __init__(
        self,
        data_dir: Path,
        *,
        machine: str,
        seed: str,
        secrets: SecretStore,
        clock: Clock,
        output_of: Callable[[int], str | None],
        local_zone: Callable[[], str],
        settings: MonitorSettings = MonitorSettings(),
    ) -> None:
        """``seed`` makes run ids into rids unique to the store; ``local_zone`` names the
        zone ``"local"`` stands for now (an IANA name)."""
        self.machine = machine
        self.settings = settings
        self._seed = seed
        self._clock = clock
        self._local_zone = local_zone
        self.worker = Worker(data_dir, secrets, output_of)
        self._last_heartbeat: datetime | None = None
        self._refused: set[tuple[str, str]] = set()
        self._synced: dict[str, Check] = {}

    def start(self) -> None:
        self.worker.start()
        self.heartbeat()

    def stop(self) -> None:
        self.worker.stop()

    # -- runs ----------------------------------------------------------------------------------

    def observe(self, event: Event, schedule: Schedule | None) -> None:
        """An engine event of ``schedule`` (None when it is not known here)."""
        if not isinstance(event, FireEvent | RunFinished) or schedule is None:
            return
        self.worker.submit(intents_for(event, schedule, self.check_of(schedule), self._seed))

    def check_of(self, schedule: Schedule) -> Check | None:
        """The check a schedule with an API key keeps equal to itself; None without a key, or
        when Healthchecks cannot be told its schedule (said once in the log)."""
        monitor = schedule.policies.monitor
        if monitor.healthchecks_key is None:
            return None
        # Here, not at the top: the exporters (xml.sax with urllib.request, plistlib) stay out of
        # an app at rest where no schedule has a Healthchecks key.
        from domi_desktop.export import healthchecks_check

        try:
            fields, tz = healthchecks_check(schedule.expr, schedule.tz, self._local_zone())
        except ExportError as error:
            if (schedule.expr, schedule.tz) not in self._refused:
                self._refused.add((schedule.expr, schedule.tz))
                log.warning("schedule %s cannot be monitored by Healthchecks: %s", schedule.id,
                            error)  # fmt: skip
            return None
        return Check(
            api=monitor.healthchecks_api or HEALTHCHECKS_IO,
            key_secret=monitor.healthchecks_key,
            name=check_name(schedule),
            schedule=fields,
            tz=tz,
            grace=int(monitor.grace.total_seconds()),
        )

    def sync(self, schedules: Iterable[Schedule]) -> None:
        """Make or update the checks of these schedules now, before their first run; those
        sent already as they are are not sent again (every edit of any schedule asks)."""
        checks = [check for s in schedules if (check := self.check_of(s)) is not None]
        fresh = [c for c in checks if self._synced.get(c.name) != c]
        self._synced.update((c.name, c) for c in fresh)
        self.worker.submit([Intent(Kind.sync, check=c, what=c.name) for c in fresh])

    # -- what a window shows -------------------------------------------------------------------

    def status_of(self, schedule: Schedule) -> tuple[CheckStatus, ...]:
        """Each target of the schedule's monitor as this app last saw it (no request)."""
        monitor = schedule.policies.monitor
        unknown = CheckState.unknown
        targets: list[tuple[str, Intent, str | None, CheckState, str | None]] = []
        if monitor.healthchecks_key is not None:
            check = self.check_of(schedule)
            if check is None:
                refused = "Healthchecks cannot be told this schedule (see the log)"
                targets.append(("Healthchecks", Intent(Kind.ping), None, unknown, refused))
            else:
                page, seen = self.worker.checks.page(check), self.worker.checks.seen(check)
                targets.append(("Healthchecks", Intent(Kind.ping, check=check), page, seen, None))
        elif monitor.healthchecks_url is not None:
            ping = monitor.healthchecks_url
            targets.append(("Healthchecks", Intent(Kind.ping, url=ping), ping, unknown, None))
        if monitor.webhook is not None:
            hook = Intent(Kind.webhook, url=monitor.webhook)
            targets.append(("webhook", hook, monitor.webhook, unknown, None))
        lanes = {lane.key: lane for lane in self.worker.lanes()}
        found = []
        for target, intent, url, seen, why in targets:
            lane = lanes.get(lane_of(intent)) if why is None else None
            if lane is None:
                found.append(CheckStatus(target, url, seen, last_error=why))
                continue
            at = lane.last_ping
            state = seen if lane.state is CheckState.unknown else lane.state
            found.append(CheckStatus(
                target, url, state, None if at is None else datetime.fromtimestamp(at, UTC),
                lane.last_kind, lane.last_error, lane.waiting,
            ))  # fmt: skip
        return tuple(found)

    def test_ping(self, schedule: Schedule, done: Callable[[PingTrial], None]) -> None:
        """A log ping to the schedule's Healthchecks check, sent now; ``done`` gets how it went
        (on a monitor's thread, or here when there is nothing to send)."""
        monitor = schedule.policies.monitor
        now = self._clock.now()
        check = self.check_of(schedule)
        if monitor.healthchecks_key is None and monitor.healthchecks_url is None:
            done(PingTrial(now, error="this schedule has no Healthchecks check"))
        elif monitor.healthchecks_key is not None and check is None:
            done(PingTrial(now, error="Healthchecks cannot be told this schedule"))
        else:
            url = None if check is not None else monitor.healthchecks_url
            body = f"test ping from domi-desktop on {self.machine}"
            intent = Intent(Kind.ping, TEST_SIGNAL, url, check, body=body,
                            what=f"schedule {schedule.id}")  # fmt: skip
            self.worker.test(intent, now, done)

    # -- sleep and wake ------------------------------------------------------------------------

    def going_to_sleep(
        self, schedules: Iterable[Schedule], done: Callable[[], None], budget: float = SLEEP_BUDGET
    ) -> None:
        """Pause this machine's checks (``schedules``: those it runs), then ``done`` (from the
        monitor's thread) once they are paused or ``budget`` seconds passed. Each check resumes
        with its first ping after the wake; the heartbeat is never paused."""
        checks = [check for s in schedules if (check := self.check_of(s)) is not None]
        self.worker.submit([Intent(Kind.pause, check=c, what=c.name) for c in checks])
        log.info("going to sleep: pausing %s Healthchecks check(s)", len(checks))

        def drained(all_sent: bool) -> None:
            if not all_sent:
                # The machine sleeps once ``done`` lets it: a pause that goes later (the network
                # back a moment before the app hears of the wake) would silence a check awake.
                log.warning("the checks could not all be paused before the sleep: not sent")
                self.worker.drop_pauses(retry_now=False)
            done()

        self.worker.when_drained(budget, drained)

    def woke(self) -> None:
        self.worker.drop_pauses()
        self.heartbeat()

    def tick(self) -> None:
        """A wake of the scheduler (at least once a minute while awake)."""
        last = self._last_heartbeat
        if last is None or not timedelta(0) <= self._clock.now() - last < HEARTBEAT_EVERY:
            self.heartbeat()

    def heartbeat(self) -> None:
        s = self.settings
        self._last_heartbeat = self._clock.now()
        check = None
        if s.healthchecks_key is not None:
            check = Check(
                api=s.healthchecks_api or HEALTHCHECKS_IO,
                key_secret=s.healthchecks_key,
                name=heartbeat_name(self.machine),
                timeout=int(s.heartbeat_period.total_seconds()),
                grace=int(s.heartbeat_grace.total_seconds()),
            )
        elif s.heartbeat_url is None:
            return
        self.worker.submit(
            [Intent(Kind.heartbeat, url=s.heartbeat_url, check=check, what="heartbeat")]
        )
