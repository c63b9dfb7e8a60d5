"""Changes reach every machine within a moment: ``NOTIFY domi_changes`` is sent in the same
transaction as each schedule write (so it is delivered exactly when the write commits), and each
instance listens on a connection of its own in a thread. On SQLite nothing listens: the per-wake
re-read of the schedules stays the way edits of another process are seen.

A lost connection is reported (``on_status(problem)``) and retried with a growing pause; the
per-wake re-read goes on meanwhile, so a lost notification delays an edit, never loses it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from domi_desktop.store import backend

log = logging.getLogger("domi_desktop.store")

CHANNEL = "domi_changes"
NOTIFY = f"NOTIFY {CHANNEL}"
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds between reconnection attempts, the last repeated."""
POLL = 1.0
"""How often the thread looks up from waiting to see whether it should stop."""


class ChangeListener:
    """Calls ``on_change()`` (from its own thread) after another instance changed a schedule;
    ``on_status(None)`` when connected, ``on_status(message)`` when the connection is lost."""

    def __init__(
        self,
        url: str,
        on_change: Callable[[], None],
        on_status: Callable[[str | None], None] = lambda _problem: None,
    ) -> None:
        self._url = url
        self._on_change = on_change
        self._on_status = on_status
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="domi-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self._thread.join(timeout)

    def _serve(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            try:
                self._listen()
                failures = 0
            except Exception as error:  # any failure of the link: report, wait, reconnect
                if self._stopping.is_set():
                    return
                pause = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                self._on_status(
                    f"the shared store {backend.hide_password(self._url)} is unreachable "
                    f"({error}); nothing shared fires here until it is back; retrying in "
                    f"{pause:g} s"
                )
                self._stopping.wait(pause)

    def _listen(self) -> None:
        import psycopg

        with psycopg.connect(
            self._url, autocommit=True, connect_timeout=backend.CONNECT_TIMEOUT
        ) as connection:
            connection.execute(f"LISTEN {CHANNEL}")
            self._on_status(None)
            # A change may have been missed while disconnected: one re-read covers it.
            self._on_change()
            while not self._stopping.is_set():
                # Back at the first notification (a burst arrives in one packet: one reload).
                if any(True for _ in connection.notifies(timeout=POLL, stop_after=1)):
                    self._on_change()
