"""The Qt side of the core's Clock/Timer/Loop interfaces, and Unix signals into the event loop."""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, Qt, QTimer, Signal

MAX_TIMER_MS = 2**31 - 1
"""A QTimer interval is a C int (about 24.8 days)."""
SWITCH_INTERVAL = 0.001
"""Seconds a busy thread keeps the GIL while another waits for it (Python's default: 5 ms)."""
TURN_BUDGET = 0.008
"""Seconds of ``call_soon`` callbacks one turn of the loop runs before it lets the rest wait."""


def favour_the_loop() -> None:
    """At start-up: the loop thread gets the GIL back sooner from a busy thread. Each turn of the
    loop takes the GIL again after Qt's C++ (a timer, a socket, an answer), and while the recorder
    thread works through a wake's claims in Python each of those waited up to the whole interval:
    the 1,000-schedule wake's longest loop gap was 96-106 ms with 5 ms, 49-58 ms with 1 ms (three
    interleaved runs each, ``bench/wake_bench.py``; the write ratio within the runs' noise)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


class QtTimerHandle:
    def __init__(self, timer: QTimer) -> None:
        self._timer = timer

    def cancel(self) -> None:
        self._timer.stop()
        self._timer.deleteLater()


class QtLoop(QObject):
    """``call_later`` on precise single-shot QTimers; ``call_soon`` safe from any thread.

    The callbacks run in the order they came, about ``budget`` seconds of them a turn: the rest
    waits for the next turn, after the timers, the sockets and the paint. Qt runs in one turn every
    event posted before it began, so when the runner's threads handed on each of a 10,000 burst's
    job ends as an event of its own, a turn ran as many as had come meanwhile, and the longer it
    took the more came: the loop stood still for 100-200 ms at a time."""

    _posted = Signal()

    def __init__(self, parent: QObject | None = None, budget: float = TURN_BUDGET) -> None:
        super().__init__(parent)
        self._budget = budget
        self._callbacks: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()
        self._posted_once = False
        """An event to run the callbacks is on its way: one at a time, however many wait."""
        self._posted.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def call_soon(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)
            if self._posted_once:
                return
            self._posted_once = True
        self._posted.emit()

    def call_later(self, delay: float, callback: Callable[[], None]) -> QtTimerHandle:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.timeout.connect(callback)
        timer.timeout.connect(timer.deleteLater)
        timer.start(min(MAX_TIMER_MS, max(0, round(delay * 1000))))
        return QtTimerHandle(timer)

    def _run(self) -> None:
        deadline = time.perf_counter() + self._budget
        while True:
            with self._lock:
                if not self._callbacks:
                    self._posted_once = False
                    return
                callback = self._callbacks.popleft()
            try:
                callback()
            except BaseException:
                # Raised into Qt as a slot's exception always was; the callbacks behind it run.
                self._posted.emit()
                raise
            if time.perf_counter() > deadline:
                self._posted.emit()
                return


class SignalBridge(QObject):
    """Unix signals (SIGTERM, SIGINT) delivered into the Qt loop without polling.

    Python runs signal handlers only when it gets control; a loop inside Qt's C++ never gives
    it. ``signal.set_wakeup_fd`` writes the signal number to a socket that Qt watches.
    """

    received = Signal(int)

    def __init__(self, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)) -> None:
        super().__init__()
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._previous = {sig: signal.signal(sig, lambda *_: None) for sig in signals}
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)

    def _read(self) -> None:
        with contextlib.suppress(BlockingIOError):
            for number in self._reader.recv(64):
                # The wakeup fd carries every signal with a Python handler, not only ours (the
                # macOS smoke test's SIGUSR1 wake): those ran their own handler, and do not stop us.
                if number in self._previous:
                    self.received.emit(number)

    def close(self) -> None:
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._reader.close()
        self._writer.close()
