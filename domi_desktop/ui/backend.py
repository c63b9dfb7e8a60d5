"""What the windows need of a running instance. ``app.host.Host`` provides it; the UI never
imports the app floor, and a test can hand the windows anything of this shape."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from domi_desktop.frontdoor.service import Service
from domi_desktop.model import Schedule
from domi_desktop.ports import RunReader, SecretStore


class Planner(Protocol):
    """The scheduler's plan, as the windows read it (``scheduler.driver.Driver``)."""

    paused: bool

    def set_paused(self, paused: bool) -> None: ...

    def next_fire(self, schedule_id: int) -> datetime | None: ...

    def soonest(self) -> tuple[datetime, Schedule] | None: ...

    def soonest_n(self, count: int) -> list[tuple[datetime, Schedule]]:
        """The next ``count`` fires from the planner's cache (no schedule decoded)."""
        ...


class WaitingRun(Protocol):
    """A run held back by its conditions (``runtime.gates.Held``)."""

    @property
    def run_id(self) -> int: ...

    @property
    def schedule_id(self) -> int: ...

    @property
    def reason(self) -> str: ...


class Waiting(Protocol):
    @property
    def held(self) -> Mapping[int, WaitingRun]:
        """Run id -> the run that waits."""
        ...


class Engine(Protocol):
    """The running engine, as the windows use it (``runtime.engine.Runtime``)."""

    @property
    def driver(self) -> Planner: ...

    @property
    def keeper(self) -> Waiting: ...

    def known_schedules(self) -> dict[int, Schedule]: ...

    def running_runs(self) -> list[int]: ...

    def running_by_schedule(self) -> dict[int, list[int]]:
        """Schedule id -> its runs in progress."""
        ...

    def stop_run(self, run_id: int, reason: str = ...) -> bool: ...

    def run_now(
        self, schedule_id: int, done: Callable[[int | Exception], None] | None = None
    ) -> None:
        """Start a manual run; ``done`` gets its id once it is on record, or the error."""
        ...


class AppBackend(Protocol):
    """The parts of a running instance the windows use, each itself: no go-between."""

    @property
    def service(self) -> Service: ...

    @property
    def secrets(self) -> SecretStore: ...

    @property
    def store(self) -> RunReader:
        """The history, read page by page (and where the data lives)."""
        ...

    @property
    def runtime(self) -> Engine: ...


class WindowActions(Protocol):
    """What the window asks of the tray app: the other windows, and quitting."""

    def open_editor(self, schedule_id: int | None) -> None: ...

    def open_history(self, schedule_id: int | None) -> None: ...

    def open_timeline(self) -> None: ...

    def open_settings(self) -> None: ...

    def quit(self) -> bool:
        """Quit after asking when jobs run; False when the user chose to stay."""
        ...

    @property
    def has_tray(self) -> bool: ...
