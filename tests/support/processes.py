"""Stopping the processes a test started, also when the test fails.

A test that starts an app asks it to quit and checks its exit code; when the app does not quit
(a hang, a failed test's half-done state) it must not outlive the test: it is killed, and the
timeout still fails the test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil

QUIT_WAIT = 60.0
"""Seconds an app may take to quit on SIGTERM: generous, for loaded machines."""


def stop(
    process: subprocess.Popen[bytes] | subprocess.Popen[str],
    sig: int = signal.SIGTERM,
    timeout: float = QUIT_WAIT,
) -> int:
    """Send ``sig`` and return the exit code; one that has not exited within ``timeout`` is
    killed and ``subprocess.TimeoutExpired`` raised."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(sig)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(process)
        raise


def kill(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """SIGKILL (also to a stopped process) and reap it; nothing if it has ended."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)


@contextlib.contextmanager
def killed_if_unready(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> Iterator[None]:
    """``with killed_if_unready(p): wait_until_ready()``: a process that never got ready (the
    wait raised) is killed before the error goes on."""
    try:
        yield
    except BaseException:
        kill(process)
        raise


def kill_strays(root: Path) -> list[int]:
    """Kill every process that names ``root`` in its command line (a job of a test's app) or has
    its data dir under it (the app itself, started with ``DOMI_DATA_DIR``): what a failed test
    left running. Returns their pids."""
    killed = []
    for process in psutil.process_iter(["cmdline"]):
        if process.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error):
            data_dir = process.environ().get("DOMI_DATA_DIR", "")
            named = str(root) in " ".join(process.info["cmdline"] or [])
            if named or (data_dir and Path(data_dir).is_relative_to(root)):
                process.kill()
                killed.append(process.pid)
    return killed
