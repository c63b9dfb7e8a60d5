"""The Qt edge of each OS: start at login, resume-from-sleep signals, time-zone changes.

The per-OS resume sources are imported by ``resume_source_for_platform`` only, on their own OS.
"""

from __future__ import annotations

from domi_desktop.platform.autostart import (
    Autostart,
    AutostartError,
    RegistryLike,
    autostart_for_platform,
    default_command,
)
from domi_desktop.platform.resume import PowerEvent, ResumeSource, resume_source_for_platform
from domi_desktop.platform.timezone import ZoneWatcher

__all__ = [
    "Autostart",
    "AutostartError",
    "PowerEvent",
    "RegistryLike",
    "ResumeSource",
    "ZoneWatcher",
    "autostart_for_platform",
    "default_command",
    "resume_source_for_platform",
]
