"""Outside monitors that know about sleep: Healthchecks checks kept equal to their schedules,
pinged with run ids, paused on the way to sleep, a heartbeat per machine; and webhooks.

No Qt: the app wires it to the engine's events and the OS's sleep signals.
"""

from __future__ import annotations

from domi_desktop.monitor.intents import HEALTHCHECKS_IO, Check, Intent, Kind, run_uuid
from domi_desktop.monitor.monitoring import Monitoring, MonitorSettings
from domi_desktop.monitor.transport import MonitorError, Refused, Unreachable

__all__ = [
    "HEALTHCHECKS_IO",
    "Check",
    "Intent",
    "Kind",
    "MonitorError",
    "MonitorSettings",
    "Monitoring",
    "Refused",
    "Unreachable",
    "run_uuid",
]
