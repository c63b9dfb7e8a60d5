"""The Qt side of the core's Clock/Timer/Loop interfaces, and Unix signals into the event loop."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, Qt, QTimer, Signal

MAX_TIMER_MS = 2**31 - 1
"""A QTimer interval is a C int (about 24.8 days)."""


class QtTimerHandle:
    def __init__(self, timer: QTimer) -> None:
        self._timer = timer

    def cancel(self) -> None:
        self._timer.stop()
        self._timer.deleteLater()


class QtLoop(QObject):
    """``call_later`` on precise single-shot QTimers; ``call_soon`` safe from any thread, run on
    the thread this object lives on.

    One turn runs the callbacks that were there when it began, in the order they came; those
    added meanwhile wait for the next turn, after the timers and the sockets. Any number of
    ``call_soon`` between two turns post one event."""

    _posted = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
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
        with self._lock:
            turn = list(self._callbacks)
            self._callbacks.clear()
            self._posted_once = False
        for index, callback in enumerate(turn):
            try:
                callback()
            except BaseException:
                # Raised into Qt as a slot's exception always was; the callbacks behind it run
                # in a turn of their own.
                with self._lock:
                    self._callbacks.extendleft(reversed(turn[index + 1 :]))
                    if self._callbacks and not self._posted_once:
                        self._posted_once = True
                        self._posted.emit()
                raise


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
