"""Every interface between the floors, in one place.

The core is handed implementations of these (a ``Clock``, a ``Timer``, a ``ScheduleSource``...);
adapters provide them (``SystemClock``, ``QtLoop``, ``Store``, ``KeyringSecretStore``, the resume
sources of ``platform/``). Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    from domi_desktop.model import Presence, Run, RunStatus, Schedule, SystemState, Wanted

# -- time ------------------------------------------------------------------------------------------


class Clock(Protocol):
    def now(self) -> datetime:
        """The wall clock as an aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (it may stop while the machine sleeps)."""
        ...


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Timer(Protocol):
    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Arm ``callback`` to run once after ``delay`` seconds; the handle cancels it."""
        ...


class Loop(Timer, Protocol):
    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the loop thread; callable from any thread."""
        ...


# -- what the scheduler and the runtime need of a store ------------------------------------------


class ScheduleSource(Protocol):
    """The scheduler's view of the stored schedules."""

    def load(self) -> tuple[list[Schedule], dict[int, str]]:
        """Every readable schedule, and the id of each unreadable one with the reason."""
        ...

    def get(self, schedule_id: int) -> Schedule | None:
        """The schedule, None when it is gone; ``DomiError`` when it cannot be read."""
        ...

    def changed(self) -> bool:
        """True when another process changed the schedules since the last call (cheap: asked at
        every wake)."""
        ...

    def rebase(self, schedule_id: int, expected: datetime | None, last_due: datetime) -> bool:
        """Compare-and-set ``last_due`` back to an earlier instant (the clock went back)."""
        ...

    def decided_ahead(self) -> dict[int, frozenset[datetime]]:
        """Schedule id → the dues already run or skipped that lie after its ``last_due``."""
        ...


class RunReader(Protocol):
    """Runs for people to read (the History window): paged, newest first."""

    @property
    def data_dir(self) -> Path: ...

    def runs(
        self,
        schedule_id: int | None = None,
        status: RunStatus | None = None,
        *,
        limit: int = 100,
        before_id: int | None = None,
        paused: bool = True,
    ) -> list[Run]:
        """``paused`` False: without the dues a recorded "Pause all" kept from running."""
        ...

    def count_runs(
        self,
        schedule_id: int | None = None,
        status: RunStatus | None = None,
        *,
        paused: bool = True,
    ) -> int: ...

    def get_run(self, run_id: int) -> Run: ...

    def runs_by_id(self, run_ids: Collection[int]) -> dict[int, Run]:
        """The runs of these ids that exist, in a few reads."""
        ...

    def schedule_labels(
        self, schedule_ids: Collection[int] | None = None
    ) -> dict[int, tuple[str, str]]:
        """Id -> (name, zone) of every schedule or of these, without decoding them."""
        ...

    def list_schedules(self) -> list[Schedule]: ...


# -- secrets -----------------------------------------------------------------------------------


class SecretStore(Protocol):
    """Secret values by name. Values never leave the store except through ``get``."""

    def get(self, name: str) -> str:
        """The value of ``name``; ``SecretError`` when it is unknown or the store is unavailable."""
        ...

    def set(self, name: str, value: str) -> None:
        """Create or replace ``name``."""
        ...

    def delete(self, name: str) -> None:
        """Remove ``name``; ``SecretError`` when it is unknown."""
        ...

    def names(self) -> list[str]:
        """The stored names, sorted."""
        ...


# -- the operating system ------------------------------------------------------------------------

PowerEvent = Literal["resume", "sleep"]


class ResumeSource(Protocol):
    status: str
    """What the source is doing, or why it cannot: for the log and the Settings window."""

    def start(
        self, on_resume: Callable[[], None], on_sleep: Callable[[], None] | None = None
    ) -> bool:
        """Begin reporting, on any thread (the caller posts to its loop); ``False`` (reason in
        ``status``) when unavailable."""
        ...

    def stop(self) -> None: ...


class UnlockSource(Protocol):
    status: str

    def start(self, on_unlock: Callable[[], None]) -> bool:
        """Report each unlock of this session, on any thread; ``False`` (reason in
        ``status``) when the OS gives no such signal here."""
        ...

    def stop(self) -> None: ...


class ConditionSource(Protocol):
    """The machine's network and power state, read from the OS for the conditions' gate."""

    @property
    def status(self) -> str:
        """What the source reads, or why it cannot: for the log and the Settings window."""
        ...

    def current(self) -> SystemState:
        """The state now; never raises (what cannot be read is reported as unknown or on mains)."""
        ...

    def start(self, on_change: Callable[[], None]) -> bool:
        """Call ``on_change`` on the Qt thread whenever the state may have changed; ``False`` (reason
        in ``status``) when the OS gives no signal, and then ``current`` is read at each wake only."""
        ...

    def stop(self) -> None: ...


class IdleSource(Protocol):
    """How long since the user last touched the computer, and whether an app holds off the
    screensaver (a presentation counts as present): ``platform.idle``."""

    @property
    def status(self) -> str:
        """Which source answers, or why none can: for the log and the Settings window."""
        ...

    def read(self) -> Presence:
        """Never raises: an idle time no source can tell is ``None``."""
        ...


@runtime_checkable
class ResourceWatch(Protocol):
    """A ``ConditionSource`` that also reads disks, named networks and paths: only those it is
    told to watch, so nothing is watched while nothing waits for it."""

    def want(self, wanted: Wanted) -> None:
        """From now on ``current`` reports these, and a change of them calls ``on_change``."""
        ...


class InhibitorHandle(Protocol):
    def release(self) -> None:
        """Let the machine sleep again; a second call does nothing."""
        ...


class SleepInhibitor(Protocol):
    status: str
    """What the last ``acquire`` did, or why it could not: for the log and the run's details."""

    def acquire(self, why: str) -> InhibitorHandle:
        """Keep the machine from sleeping until the handle is released; never raises (when the OS
        refuses, the handle does nothing and ``status`` says why)."""
        ...


class Autostart(Protocol):
    def enable(self, command: Sequence[str]) -> None:
        """Start ``command`` at login (replacing an earlier entry of ours)."""
        ...

    def disable(self) -> None:
        """Remove our entry; nothing happens when there is none."""
        ...

    def is_enabled(self) -> bool: ...

    def describe(self) -> str:
        """Where the entry lives, for the Settings window."""
        ...


class WakeAlarm(Protocol):
    """An alarm that wakes the machine from sleep at an instant (``platform.wake``)."""

    @property
    def status(self) -> str:
        """What is armed and how, or why nothing can be: for the log and the editor."""
        ...

    def capability(self) -> str | None:
        """``None`` when this machine can be woken; else why not, and what would allow it."""
        ...

    def arm(self, at: datetime) -> bool:
        """Wake the machine at ``at`` (aware), replacing an earlier alarm of ours; ``False`` (the
        reason in ``status``) when the OS refused. Never raises."""
        ...

    def cancel(self) -> None:
        """Take our alarm back; nothing happens when none is armed."""
        ...


class InputWatch(Protocol):
    """Tells whether a person used the machine since a mark: before sending a machine the app
    woke back to sleep, nobody may have touched it."""

    @property
    def status(self) -> str: ...

    def mark(self) -> None:
        """Count input from now on."""
        ...

    def input_since_mark(self, woke_at: datetime) -> bool | None:
        """True when input arrived since ``mark`` (a watch that knows when the person was last
        active compares with ``woke_at``, when the machine woke); ``None`` when it cannot be told,
        which counts as input: the machine is never put to sleep under someone's hands."""
        ...


class Sleeper(Protocol):
    """Puts the machine back to sleep after a wake the app caused (``platform.wake``)."""

    @property
    def status(self) -> str: ...

    def sleep(self) -> bool:
        """Ask the OS to suspend now (or let it, where the OS decides); ``False`` (the reason in
        ``status``) when it refused. Never raises; it may return only after the resume."""
        ...
