"""macOS and Windows power: ``psutil.sensors_battery()`` (IOKit's power sources, Windows'
``GetSystemPowerStatus``), read at each wake and polled while started, since neither OS signal
reaches a Qt app cheaply.

psutil is imported on first use, so this module imports anywhere.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

from domi_desktop.platform.conditions.base import PowerReading

POLL_MS = 2000
"""While started, a change is seen within this long: a run waiting for the charger starts within
it, and one with ``stop_if_lost`` is stopped within it."""


def psutil_battery() -> Any:
    return importlib.import_module("psutil").sensors_battery()


def reading_of(battery: Any) -> PowerReading:
    """``None`` (no battery) is mains; an unknown ``power_plugged`` too, unless the battery says
    it is discharging (psutil reports ``secsleft`` then)."""
    if battery is None:
        return PowerReading()
    plugged = battery.power_plugged
    if plugged is None:
        plugged = not isinstance(battery.secsleft, int) or battery.secsleft < 0
    return PowerReading(on_ac=bool(plugged), battery_percent=round(battery.percent))


class PsutilPowerReader(QObject):
    def __init__(
        self, sensors: Callable[[], Any] = psutil_battery, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.status = "not started"
        self._sensors = sensors
        self._on_change: Callable[[], None] | None = None
        self._last: PowerReading | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def read(self) -> PowerReading:
        try:
            reading = reading_of(self._sensors())
        except (ImportError, OSError, RuntimeError, AttributeError) as error:
            self.status = f"cannot read the battery ({error}); counted as on mains"
            return PowerReading()
        return reading

    def start(self, on_change: Callable[[], None]) -> bool:
        self._on_change = on_change
        self._last = self.read()
        self._timer.start()
        self.status = f"reading the battery through psutil every {POLL_MS // 1000} s"
        return True

    def stop(self) -> None:
        self._timer.stop()
        self._on_change = None

    def _poll(self) -> None:
        reading = self.read()
        if reading != self._last:
            self._last = reading
            if self._on_change is not None:
                self._on_change()
