"""Work done soon after it is asked for, once for a burst of asks, and not more often than a pace."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Paced(QObject):
    """``ask`` runs ``work`` at the next turn of the loop, or ``interval`` seconds after its last
    run if that is later: a catch-up's thousands of events redraw the tray a few times a second,
    not at every turn. ``now`` runs it at once."""

    def __init__(self, work: Callable[[], None], interval: float, parent: QObject) -> None:
        super().__init__(parent)
        self._work = work
        self._interval = interval
        self._last = -interval
        self._asked = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.now)

    def ask(self) -> None:
        # Asked at every event of a burst: answered in Python while a run is already on its way
        # (a call into Qt gives the GIL up, and waits for it back behind the busy threads).
        if self._asked:
            return
        self._asked = True
        wait = self._last + self._interval - time.monotonic()
        self._timer.start(max(0, int(wait * 1000)))

    def now(self) -> None:
        self._asked = False
        self._timer.stop()
        self._last = time.monotonic()
        self._work()

    def stop(self) -> None:
        self._asked = False
        self._timer.stop()
