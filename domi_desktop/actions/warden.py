"""The warden: on a shared store, a small process beside the app that stops the app's jobs when the
app can no longer vouch for them.

Another machine takes a run over once its lease expired (``store.leases``), and re-runs it. A
machine whose app is frozen (stopped in a debugger, a SIGSTOP, a hung loop) or killed cannot stop
its own jobs, which run on: two live copies of one schedule. The warden is told each job's process
as it starts and, at each renewal, how long its leases now hold; when they are a quarter of a lease
from lapsing unrenewed (before any other machine may take a run over) or the app is gone (its pipe
closed), it kills the trees it
watches, and every process tagged with the app's token (``identity.job_tags``): an app frozen
between starting a job and telling the warden leaves that job tagged all the same. It does nothing
else, so it cannot freeze with the app: it waits on its pipe alone.

The app writes lines to the warden's stdin: ``held <seconds>``, ``watch <pid> <start marker>``,
``release <pid>``, ``bye`` (the app quits: leave the jobs to it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import IO

import psutil

from domi_desktop.actions import identity

log = logging.getLogger(__name__)

MARGIN = 0.75
"""Of the lease: the jobs stop once their leases have less than the rest left. Renewals come every
third of the lease, so a healthy app never gets that near."""
POLL = 0.2
"""Seconds between two looks at the pipe and the deadline."""


def trusted_until(written: datetime, lease: timedelta) -> datetime:
    """Until when a lease written at ``written`` is sure to hold: later, this machine's run may
    have been taken over (its job stopped by the warden), so it is neither launched nor started
    as it stands."""
    return written + lease * MARGIN


def lapse_at(now: float, held: float, lease: float) -> float:
    """When the jobs are stopped: leases that hold ``held`` seconds more from ``now`` are then
    within ``1 - MARGIN`` of a lease from lapsing."""
    return now + held - lease * (1 - MARGIN)


class Warden:
    """The app's end: a pipe to the warden process. Never raises: a warden that died is logged
    once, and the jobs then run as they would without one.

    It keeps the warden's deadline too, so that a job the warden killed (the app was frozen past
    it) is told from one killed by anyone else when its end is recorded (``stopped``)."""

    def __init__(
        self,
        process: subprocess.Popen[str],
        lease: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._process = process
        self._lock = threading.Lock()
        self._broken = False
        self._lease = lease
        self._clock = clock
        self._deadline: float | None = None
        self._watched: set[int] = set()
        self._stopped: set[int] = set()

    @classmethod
    def start(cls, lease: float) -> Warden:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "domi_desktop.actions.warden",
                str(lease),
                identity.this_process().token,
            ],
            stdin=subprocess.PIPE,
            text=True,
            bufsize=1,
            # Its own group: a signal meant for a job's group, or the terminal's ^C, is not its.
            start_new_session=sys.platform != "win32",
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
        return cls(process, lease)

    def held(self, seconds: float) -> None:
        """The leases renewed last hold ``seconds`` more, from now (the renewal's own time was
        spent before: a slow database must not make the warden later than the lease)."""
        with self._lock:
            self._lapse()
            self._deadline = lapse_at(self._clock(), seconds, self._lease)
        self._send(f"held {seconds:.3f}")

    def watch(self, pid: int) -> None:
        with self._lock:
            self._lapse()
            self._watched.add(pid)
            if self._deadline is None:
                self._deadline = lapse_at(self._clock(), self._lease, self._lease)
        self._send(f"watch {pid} {identity.start_marker(pid) or '-'}")

    def release(self, pid: int) -> None:
        with self._lock:
            self._lapse()
            self._watched.discard(pid)
            self._stopped.discard(pid)
        self._send(f"release {pid}")

    def stopped(self, pid: int) -> bool:
        """Whether the warden has stopped ``pid``'s tree: it watched it past its deadline."""
        with self._lock:
            self._lapse()
            return pid in self._stopped

    def _lapse(self) -> None:
        """The warden's deadline, as ``guard`` keeps it: once passed, what it watched is stopped."""
        if self._deadline is not None and not self._broken and self._clock() >= self._deadline:
            self._stopped |= self._watched
            self._watched.clear()
            self._deadline = None

    def close(self) -> None:
        self._send("bye")
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _send(self, line: str) -> None:
        with self._lock:
            if self._broken or self._process.stdin is None:
                return
            try:
                self._process.stdin.write(line + "\n")
            except (OSError, ValueError) as error:
                self._broken = True
                log.warning(
                    "the warden is gone (%s): jobs are no longer stopped for a lease", error
                )


_current: Warden | None = None


def install(warden: Warden | None) -> None:
    """The warden of every job this process starts from now on (None: none)."""
    global _current
    _current = warden


def watch(pid: int) -> None:
    if _current is not None:
        _current.watch(pid)


def release(pid: int) -> None:
    if _current is not None:
        _current.release(pid)


def stopped(pid: int) -> bool:
    """Whether the warden stopped the job ``pid`` (then its end is the warden's, not a failure)."""
    return _current is not None and _current.stopped(pid)


def kill_tree(pid: int, marker: str | None) -> bool:
    """Kill ``pid``'s tree if ``pid`` is still the process that was watched."""
    if marker is not None and identity.start_marker(pid) != marker:
        return False
    if sys.platform == "win32":
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for process in [*root.children(recursive=True), root]:
                with contextlib.suppress(psutil.Error):
                    process.kill()
        return True
    try:
        os.killpg(pid, signal.SIGKILL)  # the job leads its own session (``ProcessTree``)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_tagged(token: str) -> list[int]:
    """Kill every process whose environment names ``token`` as its owner; their pids."""
    me = os.getpid()
    killed = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if process.pid != me and process.environ().get(identity.OWNER_VARIABLE) == token:
                process.kill()
                killed.append(process.pid)
    return killed


def guard(
    lines: Callable[[float], str | None],
    lease: float,
    kill: Callable[[int, str | None], bool] = kill_tree,
    clock: Callable[[], float] = time.monotonic,
    strays: Callable[[], list[int]] = list,
) -> str:
    """The warden's loop: ``lines(timeout)`` gives the next line (None: nothing yet, ``""``: the
    app is gone); ``strays()`` kills the app's tagged processes. Returns why it ended."""
    watched: dict[int, str | None] = {}
    deadline: float | None = None
    while True:
        line = lines(POLL)
        if line == "":
            _stop(watched, kill, strays, "the app is gone")
            return "eof"
        words = (line or "").split()
        if words == ["bye"]:
            return "bye"
        if len(words) == 2 and words[0] == "held" and _is_number(words[1]):
            deadline = lapse_at(clock(), float(words[1]), lease)
        elif len(words) == 3 and words[0] == "watch" and words[1].isdigit():
            watched[int(words[1])] = None if words[2] == "-" else words[2]
            if deadline is None:
                deadline = lapse_at(clock(), lease, lease)
        elif len(words) == 2 and words[0] == "release" and words[1].isdigit():
            watched.pop(int(words[1]), None)
        if deadline is not None and clock() >= deadline:
            _stop(watched, kill, strays, "the app did not renew its leases in time")
            deadline = None


def _is_number(word: str) -> bool:
    try:
        return float(word) >= 0
    except ValueError:
        return False


def _stop(
    watched: dict[int, str | None],
    kill: Callable[[int, str | None], bool],
    strays: Callable[[], list[int]],
    why: str,
) -> None:
    stopped = [pid for pid, marker in sorted(watched.items()) if kill(pid, marker)]
    stopped += strays()
    if stopped:
        print(f"domi-desktop warden: {why}: killed jobs {stopped}", file=sys.stderr, flush=True)
    watched.clear()


def _reader(stream: IO[str]) -> Callable[[float], str | None]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    # A thread, not select(): a pipe cannot be waited on with a timeout on Windows.
    threading.Thread(target=pump, daemon=True).start()

    def next_line(timeout: float) -> str | None:
        # A sleep, not ``get(timeout=)``: a timed wait on a lock never returned under a clock
        # that libfaketime speeds up (the tests' fleets), and then nothing was ever killed.
        for attempt in range(2):
            try:
                return lines.get_nowait()
            except queue.Empty:
                if attempt == 0:
                    time.sleep(timeout)
        return None

    return next_line


def main(argv: list[str]) -> int:
    # ^C in the app's terminal is for the app: the warden ends with its pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    token = argv[1]
    guard(_reader(sys.stdin), float(argv[0]), strays=lambda: kill_tagged(token))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
