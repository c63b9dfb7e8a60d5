"""What the windows need of a running instance. ``app.engine.EngineHandle`` provides it; the UI
imports the app floor, and a test can hand the windows anything of this shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from domi_desktop.frontdoor.service import Service
from domi_desktop.ports import RunReader, SecretStore
from domi_desktop.runtime.view import EngineState


class Engine(Protocol):
    """The running engine, as the windows see it: its picture, and what they may ask of it
    (each request is posted to the engine's thread; none waits)."""

    @property
    def state(self) -> EngineState:
        """The latest picture of the engine (``runtime.view``)."""
        ...

    def set_paused(self, paused: bool) -> None: ...

    def sleep_when_done(self, on: bool) -> None:
        """Put the computer to sleep when the running jobs finish, unless someone uses it."""
        ...

    def stop_run(self, run_id: int, reason: str = ...) -> None: ...

    def run_now(
        self, schedule_id: int, done: Callable[[int | Exception], None] | None = None
    ) -> None:
        """Start a manual run; ``done`` gets its id once it is on record, or the error, on the
        GUI thread."""
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
    def engine(self) -> Engine: ...


class WindowActions(Protocol):
    """What the window asks of the tray app: the other windows, and quitting."""

    def open_editor(self, schedule_id: int | None, *, fresh_copy: bool = False) -> None:
        """``fresh_copy``: a copy Duplicate just made, deleted if the editor is not saved."""
        ...

    def open_history(self, schedule_id: int | None) -> None: ...

    def open_timeline(self) -> None: ...

    def open_settings(self) -> None: ...

    def quit(self) -> bool:
        """Quit after asking when jobs run; False when the user chose to stay."""
        ...

    @property
    def has_tray(self) -> bool: ...
