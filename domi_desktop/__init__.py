"""domi-desktop: cron schedules that are honest about what happened while the laptop slept."""

from __future__ import annotations

__version__ = "0.1.0"
