"""Values that cross layers: schedules, their actions and policies, runs. Frozen and plain."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from enum import Enum, StrEnum


class CatchUp(Enum):
    """What to do with a due instant found only after the 60 s grace (the machine slept or was off)."""

    latest = "latest"
    """Run the most recent missed due once, late; older ones are recorded as skipped (the seed)."""
    skip = "skip"
    """Record the late due as skipped (reason ``missed``) and wait for the next one."""


class Overlap(Enum):
    """What a fire does while a run of the same concurrency key is still running (the seed's isBusy)."""

    skip = "skip"
    """Record the fire as skipped with reason ``busy`` (default)."""
    queue = "queue"
    """Start it when the running one ends; at most one waits, later fires are skipped ``busy``."""
    parallel = "parallel"
    """Start it anyway."""
    replace = "replace"
    """Stop the running one (it ends ``interrupted``), then start this one."""


class RunStatus(Enum):
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    timed_out = "timed_out"
    interrupted = "interrupted"
    skipped = "skipped"
    waiting = "waiting"
    """Due, but held back by an unmet condition (its reason says which); it keeps its due."""

    @property
    def finished(self) -> bool:
        return self not in (RunStatus.running, RunStatus.waiting)


class Trigger(Enum):
    scheduled = "scheduled"
    catch_up = "catch_up"
    manual = "manual"
    resumed = "resumed"
    login = "login"
    """The app started in a session (``SessionTriggers.at_login``)."""
    unlock = "unlock"
    resume = "resume"
    """The machine woke from sleep (``SessionTriggers.on_resume``); ``resumed`` is a re-run."""
    before_sleep = "before_sleep"


class SkipReason(Enum):
    missed = "missed"
    busy = "busy"
    paused = "paused"
    catch_up_window = "catch_up_window"
    conditions = "conditions"
    """A condition was still unmet at the deadline (``on_deadline`` skip); the reason says which."""
    you_skipped = "you_skipped"
    """The user asked to skip this due ("skip next")."""


PROCESS_DIED = "process died"
"""The reason recorded on a run whose process ended without finishing it."""

WARDEN_STOPPED = (
    "stopped by the warden: the app did not renew its leases in time (it was frozen or too busy),"
    " so another machine may run it again"
)
"""The reason recorded on a run of a shared store whose job the warden (``actions.warden``) ended."""

NOT_STARTED_LATE = "not started: most of its lease went by before the job could start"
"""The reason the runner gives for a run of a shared store that it did not start
(``ActionRequest.start_by``); the app writes the start anew and tries again."""

LOCAL_ZONE = "local"
"""A schedule's zone meaning 'the OS zone at the time of evaluation' (a laptop that travels)."""

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class CommandAction:
    """A process to start. Exactly one of ``argv`` (no shell) and ``shell`` (an explicit shell line)."""

    argv: tuple[str, ...] = ()
    shell: str | None = None
    cwd: str | None = None
    env: Pairs = ()
    """Variables set for the job on top of a deliberate minimal environment (PATH, HOME, LANG...)."""
    secret_env: Pairs = ()
    """(variable, secret name): the value is read from the keyring at fire time."""
    stdin: str | None = None
    """Text fed to the job's standard input (cron's ``%`` rule puts the tail of a line here)."""
    kind: str = field(default="command", init=False)


@dataclass(frozen=True, slots=True)
class HttpAction:
    url: str
    method: str = "GET"
    headers: Pairs = ()
    secret_headers: Pairs = ()
    """(header, secret name): the value is read from the keyring at fire time."""
    body: str | None = None
    timeout: float = 30.0
    kind: str = field(default="http", init=False)


Action = CommandAction | HttpAction


class Placement(Enum):
    """Where a schedule may run when several machines share one store."""

    anywhere = "anywhere"
    """Any machine may claim a due; the first claim to commit wins (the default)."""
    machines = "machines"
    """Only the machines named in ``Policies.machines`` claim its dues and take over its runs."""
    first_awake = "first_awake"
    """Any machine, and said on purpose: the first machine awake at or after the due claims it
    (the compare-and-set picks it) and the first awake takes over a run whose machine vanished.
    Claims and take-overs are those of ``anywhere``; lists show the intent."""


class OnDeadline(Enum):
    """What a run that waited ``wait_at_most`` for its conditions does then."""

    run = "run"
    """Run anyway, saying which condition was still unmet."""
    skip = "skip"
    """Record the run as skipped, saying which condition was still unmet."""


class AtWindowEnd(Enum):
    """What a run that found no qualifying moment inside its window does when the window ends."""

    skip = "skip"
    """Record it as skipped, saying why (asleep, on battery...)."""
    run = "run"
    """Run it then anyway (or at the first awake moment after), saying why."""


class OnReturn(Enum):
    """What a job started because the user was away does when the user comes back."""

    pause = "pause"
    """Stop its whole process tree where it is, and let it go on at the next away; its timeout
    counts only the time it ran."""
    stop = "stop"
    """Stop it; it runs once more at the next away."""
    carry_on = "continue"
    """Let it run."""


@dataclass(frozen=True, slots=True)
class Window:
    """Wall-clock hours a run must start within, in the schedule's zone; ``end <= start``
    crosses midnight (``22:00-06:00``)."""

    start: time
    end: time

    @property
    def text(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    @property
    def crosses_midnight(self) -> bool:
        return self.end <= self.start


@dataclass(frozen=True, slots=True)
class Conditions:
    """What must hold of the machine before a due run starts; the defaults wait for nothing."""

    requires_network: bool | None = None
    """``None``: the default of the action's kind (an HTTP action needs the network)."""
    unmetered_only: bool = False
    metered_after: timedelta | None = None
    """With ``unmetered_only``: a metered run is allowed after this long without a success."""
    on_ac_power: bool = False
    min_battery_percent: int | None = None
    """On battery, wait while the charge is below this; on mains any charge will do."""
    wait_at_most: timedelta | None = None
    """Counted from the due: after it the run goes ahead or is skipped (``on_deadline``)."""
    on_deadline: OnDeadline = OnDeadline.run
    stop_if_lost: bool = False
    """Stop the running job when a condition that held at its start goes away, and run it again
    once when the condition returns."""
    keep_awake: bool = False
    """Hold a sleep inhibitor while the job runs."""
    volume: str | None = None
    """A disk that must be mounted: ``LABEL=Backup``, ``UUID=...``, or a bare label or UUID. Its
    mount point is the job's ``DOMI_VOLUME_PATH``."""
    network_name: str | None = None
    """The Wi-Fi network (its SSID) the machine must be on, or ``ethernet`` for a wired one."""
    path_exists: str | None = None
    """An absolute path that must exist (a file appears, a share is mounted)."""
    window: Window | None = None
    """Start only inside these hours (``scheduler.window``): once per period of the expression,
    at the first moment inside the window when the other conditions hold."""
    at_window_end: AtWindowEnd = AtWindowEnd.skip
    away: timedelta | None = None
    """Start only once nobody has touched the computer for this long (and no app holds off
    the screensaver: a presentation counts as present)."""
    on_return: OnReturn = OnReturn.pause


@dataclass(frozen=True, slots=True)
class SessionTriggers:
    """Moments of the session that fire a schedule besides its cron expression, each at most
    once per ``min_interval`` (``None``: every time)."""

    at_login: bool = False
    """The app starts in a session."""
    at_unlock: bool = False
    on_resume: bool = False
    before_sleep: bool = False
    """Under the app's delay inhibitor: the machine sleeps once the job ends or is stopped."""
    min_interval: timedelta | None = None
    only: bool = False
    """The cron expression fires nothing: only these moments do (an imported ``@reboot``)."""

    @property
    def any(self) -> bool:
        return self.at_login or self.at_unlock or self.on_resume or self.before_sleep


@dataclass(frozen=True, slots=True)
class Alerts:
    """When a schedule's failures become notifications; the defaults tell each new thing once."""

    notify_every: int | None = None
    """While failing with the same error, a reminder every this many failures (None: none)."""
    cooldown: timedelta | None = timedelta(days=1)
    """While failing with the same error, a reminder once this long has passed (None: none)."""
    notify_recovery: bool = True
    auto_pause_after: int | None = None
    """Pause the schedule after this many consecutive failures."""
    stale_after: timedelta | None = None
    """Notify when no run has succeeded for this long (then at most once a day)."""


@dataclass(frozen=True, slots=True)
class Monitor:
    """Outside monitors told of this schedule's runs (``domi_desktop.monitor``); none by default."""

    healthchecks_url: str | None = None
    """A Healthchecks check's ping URL (``https://hc-ping.com/<uuid>``), made by the user."""
    healthchecks_key: str | None = None
    """The name of the secret holding a Healthchecks project API key: domi then creates and
    updates the check itself from the schedule, and pauses it while the machine sleeps."""
    healthchecks_api: str | None = None
    """A self-hosted Healthchecks' base URL (``None``: https://healthchecks.io)."""
    grace: timedelta = timedelta(minutes=30)
    """How late a ping may come before Healthchecks says the check is down."""
    webhook: str | None = None
    """A URL that gets a JSON POST at each start, success and failure (Cronitor, ntfy...)."""


@dataclass(frozen=True, slots=True)
class Hold:
    """The user's word on one coming due of a schedule: skip it, or run it no earlier than
    ``until`` (snoozed: it keeps its due, so it runs late against it, and once)."""

    due: datetime
    """The due it applies to (aware UTC); once ``last_due`` reaches it the hold is spent."""
    until: datetime | None = None
    """Snoozed until then; ``None``: skipped."""

    @property
    def skip(self) -> bool:
        return self.until is None


@dataclass(frozen=True, slots=True)
class Policies:
    """Per-schedule policies; the defaults reproduce the seed's scheduler."""

    catch_up: CatchUp = CatchUp.latest
    catch_up_within: timedelta | None = None
    """A late due older than this is skipped (reason ``catch_up_window``) instead of run."""
    overlap: Overlap = Overlap.skip
    concurrency_key: str | None = None
    """Schedules sharing a key never overlap; ``None`` means the schedule's own id."""
    timeout: timedelta | None = None
    retries: int = 0
    retry_backoff: timedelta = timedelta(seconds=30)
    """Delay before the first retry; it doubles for each further one."""
    jitter: timedelta = timedelta(0)
    """A random delay in [0, jitter) added before the action starts (never to the recorded due)."""
    wake_to_run: bool = False
    """Wake the machine from sleep shortly before each due (``scheduler.wake``), and let it sleep
    again after the woken run when nobody touched it meanwhile."""
    conditions: Conditions = Conditions()
    """What must hold of the machine before a due run starts (``scheduler.conditions``)."""
    alerts: Alerts | None = None
    """When failures become notifications; ``None``: the app's defaults (its settings)."""
    placement: Placement = Placement.anywhere
    machines: tuple[str, ...] = ()
    """With ``Placement.machines``: the names (``--machine``) of the machines that may run it."""
    monitor: Monitor = Monitor()
    """Outside monitors told of its runs."""
    session: SessionTriggers = SessionTriggers()
    once_at: datetime | None = None
    """A one-off: the single instant (aware UTC) it runs at, fixed when it was set; the cron
    expression then only names that date for readers that know no one-offs."""
    hold: Hold | None = None
    """Skip or snooze of the next due (``scheduler.oneoff``)."""
    background: bool = False
    """Run with the lowest CPU and disk priority, its whole process tree (``actions.priority``)."""


class NetworkState(Enum):
    """What the OS says of the network, as far as a job that needs the internet cares."""

    online = "online"
    offline = "offline"
    portal = "portal"
    """Behind a captive portal: connected, but the internet is not reachable yet."""
    limited = "limited"
    """Connected to a local network or site only."""
    unknown = "unknown"
    """The OS cannot tell (no backend): not held against a job."""


@dataclass(frozen=True, slots=True)
class SystemState:
    """The machine's state as the condition sources read it: the input of the gate."""

    network: NetworkState = NetworkState.unknown
    metered: bool | None = None
    """``None``: the OS cannot tell, which counts as not metered."""
    on_ac: bool = True
    """A machine without a battery is on mains."""
    battery_percent: int | None = None
    """``None``: no battery, or its charge is unknown."""
    volumes: tuple[Volume, ...] = ()
    """The mounted volumes, when a schedule waits for one (an unknown disk is not mounted)."""
    network_names: frozenset[str] = frozenset()
    """The Wi-Fi names (SSIDs) the machine is on, and ``ethernet`` when it is wired."""
    network_names_hidden: bool = False
    """The OS keeps the Wi-Fi names from the app (macOS 14+ without Location Services)."""
    paths: frozenset[str] = frozenset()
    """Of the paths schedules wait for, those that exist."""
    idle: timedelta | None = None
    """How long since the user last touched keyboard or mouse; ``None``: the session cannot
    tell (read only when a schedule waits for the user to step away)."""
    presenting: bool = False
    """Another app holds off the screensaver (a video, a presentation): the user is there."""


@dataclass(frozen=True, slots=True)
class Presence:
    """What the session says of its user: the idle time and whether an app holds off the
    screensaver (``ports.IdleSource``)."""

    idle: timedelta | None = None
    presenting: bool = False


@dataclass(frozen=True, slots=True)
class Volume:
    """A mounted filesystem as the OS lists it."""

    label: str
    uuid: str
    mount_point: str


@dataclass(frozen=True, slots=True)
class Wanted:
    """What the schedules that wait or run need watched: nothing else is."""

    volumes: frozenset[str] = frozenset()
    network_names: bool = False
    paths: frozenset[str] = frozenset()
    away: bool = False
    """The session's idle time and presence (a schedule waits for the user to step away)."""

    def __bool__(self) -> bool:
        return bool(self.volumes or self.network_names or self.paths or self.away)


@dataclass(frozen=True, slots=True)
class Schedule:
    id: int
    name: str
    expr: str
    tz: str
    """An IANA zone name, or ``"local"``."""
    action: Action
    enabled: bool = True
    policies: Policies = Policies()
    last_due: datetime | None = None
    """The due instant of the last fire (aware UTC); a new, edited or re-enabled schedule gets now."""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    notes: str = ""
    """The user's own words on the schedule (why it exists, whom to call); never read by the
    scheduler."""


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    schedule_id: int
    status: RunStatus
    trigger: Trigger
    due: datetime | None
    fired_at: datetime | None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    reason: str | None = None
    late: bool = False
    missed_count: int = 0
    exit_code: int | None = None
    output_tail: str | None = None
    log_path: str | None = None
    resumed_from: int | None = None
    attempt: int = 0

    @property
    def duration(self) -> timedelta | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


def printed_nothing(output_tail: str | None) -> bool:
    """Whether a finished run wrote no byte, so has no log file at its ``log_path``: the runner
    makes the file with the first byte, and every byte (its own notes too) reaches the tail
    (``actions.capture.OutputCapture``)."""
    return output_tail == ""


@dataclass(frozen=True, slots=True)
class FireClaim:
    """What the runtime asks the store to record for one fire, all or nothing (``claim_fire``):
    ``last_due`` moves from ``expected_last_due`` to ``due`` (compare-and-set), one skipped row per
    instant of ``skipped`` (the latest 100; ``missed_count`` is the full count) and the fire's own
    row, ``running`` or ``skipped`` with a ``reason`` when a policy turns it into a skip."""

    schedule_id: int
    expected_last_due: datetime | None
    due: datetime
    fired_at: datetime
    trigger: Trigger = Trigger.scheduled
    late: bool = False
    missed_count: int = 0
    skipped: tuple[datetime, ...] = ()
    skip_reason: SkipReason = SkipReason.missed
    status: RunStatus = RunStatus.running
    reason: SkipReason | str | None = None
    exclusive: bool = False
    """A run of the schedule still ``running`` on another machine of a shared store turns this
    fire into a ``busy`` skip, seen inside the claim's own transaction: the overlap policy holds
    across machines, not only in this machine's lanes."""


class WakeReason(StrEnum):
    """Why the scheduler woke; every wake re-plans from the wall clock whatever the reason."""

    start = "start"
    timer = "timer"
    resume = "resume"
    clock_jump = "clock_jump"
    tz_change = "tz_change"
    edit = "edit"
    manual = "manual"
    condition = "condition"
    """The OS said the network or the power changed (a waiting run may start now)."""


@dataclass(frozen=True, slots=True)
class FireOutcome:
    """What became of one fire of a wake, for the scheduler: claimed (``fired``) or not, and the
    schedule as it now is when that is known without reading the database."""

    schedule_id: int
    fired: bool
    schedule: Schedule | None = None
    error: str | None = None
