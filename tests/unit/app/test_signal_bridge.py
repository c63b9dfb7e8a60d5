"""The signal bridge hands the Qt loop only the signals it was made for (SIGTERM, SIGINT)."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from domi_desktop.app.qtloop import SignalBridge

pytestmark = pytest.mark.posix_only  # SIGUSR1, and a signal sent to oneself


def test_another_signal_runs_its_own_handler_and_does_not_reach_the_app(qtbot: Any) -> None:
    """Python's wakeup fd carries every signal with a Python handler: the macOS smoke test's
    SIGUSR1 (a posted wake) once reached the app as a stop, and it quit."""
    received: list[int] = []
    handled: list[int] = []
    bridge = SignalBridge((signal.SIGTERM,))
    bridge.received.connect(received.append)
    before = signal.signal(signal.SIGUSR1, lambda number, _frame: handled.append(number))
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        qtbot.waitUntil(lambda: handled == [signal.SIGUSR1], timeout=10_000)
        # The wakeup fd is read in order: once SIGTERM is received, SIGUSR1's byte was read.
        os.kill(os.getpid(), signal.SIGTERM)
        qtbot.waitUntil(lambda: signal.SIGTERM in received, timeout=10_000)
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGUSR1, before)
        bridge.close()
