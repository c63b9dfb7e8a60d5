"""What every wake alarm shares: the capability bit of Linux, the instant as whole seconds and as
text (the alarm of a machine that cannot be woken is the runtime's ``NoWakeAlarm``)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

CAP_WAKE_ALARM = 35
"""The capability (linux/capability.h) that lets a process set an alarm that wakes the machine."""


def epoch_seconds(at: datetime) -> int:
    """``at`` as whole seconds since the epoch, rounded up: an alarm never rings early."""
    return math.ceil(at.astimezone(UTC).timestamp())


def utc_text(at: datetime) -> str:
    """``2026-12-02 02:59:30 UTC``: the form systemd's calendar reads too."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def has_capability(pid: int | str, capability: int, proc: Path = Path("/proc")) -> bool | None:
    """Whether process ``pid`` (``"self"``) holds ``capability`` in its effective set; ``None`` when
    its status cannot be read."""
    try:
        text = (proc / str(pid) / "status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            try:
                return bool(int(line.split()[1], 16) >> capability & 1)
            except (IndexError, ValueError):
                return None
    return None
