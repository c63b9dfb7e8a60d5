"""Run a job "in the background": the lowest CPU and disk priority, for its whole process tree.

Linux: nice 19 and the idle I/O class, set by ``nice`` and ``ionice`` execing the job in the same
process (its pid stays the job's), so that no child it forks can be quicker than the change:
both are inherited. macOS: ``taskpolicy -b`` (``PRIO_DARWIN_BG``: low CPU, throttled I/O and
network), inherited too. Windows: ``IDLE_PRIORITY_CLASS`` at creation (children of an idle
process start idle) and EcoQoS (power throttling) set before the suspended process is resumed.
Where a tool is missing the job runs at normal priority and the log says why.
"""

from __future__ import annotations

import functools
import logging
import shutil
import sys

log = logging.getLogger(__name__)

_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
IDLE_PRIORITY_CLASS = 0x00000040
"""Windows ``CreateProcess`` flag: the job and the processes it starts run when nothing else does."""


def background_prefix() -> list[str]:
    """What goes in front of a job's argv to run it in the background here (POSIX)."""
    if sys.platform == "linux":
        tools = _tools("nice", "ionice")
        if tools is None:
            return []
        nice, ionice = tools
        return [nice, "-n", "19", ionice, "-c", "3"]
    if sys.platform == "darwin":
        tools = _tools("taskpolicy")
        return [] if tools is None else [tools[0], "-b"]
    return []


def creation_flags(background: bool) -> int:
    """The extra ``CreateProcess`` flags of a job (Windows)."""
    return IDLE_PRIORITY_CLASS if background and sys.platform == "win32" else 0


@functools.cache
def _tools(*names: str) -> list[str] | None:
    found = [shutil.which(name, path=_SYSTEM_PATH) for name in names]
    missing = [name for name, path in zip(names, found, strict=True) if path is None]
    if missing:
        log.warning("background jobs run at normal priority: %s not found", ", ".join(missing))
        return None
    return [path for path in found if path is not None]


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _PROCESS_POWER_THROTTLING = 4
    _THROTTLE_EXECUTION_SPEED = 0x1
    _PROCESS_SET_INFORMATION = 0x0200

    class _Throttling(ctypes.Structure):
        _fields_ = (
            ("Version", wintypes.ULONG),
            ("ControlMask", wintypes.ULONG),
            ("StateMask", wintypes.ULONG),
        )

    def eco_qos(pid: int) -> None:
        """EcoQoS for the (still suspended) job: Windows 11 runs it on efficient cores at low
        clock. Best effort: older Windows has no such class, and the idle priority holds."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(_PROCESS_SET_INFORMATION, False, pid)
        if not handle:
            return
        try:
            state = _Throttling(1, _THROTTLE_EXECUTION_SPEED, _THROTTLE_EXECUTION_SPEED)
            if not kernel32.SetProcessInformation(
                handle, _PROCESS_POWER_THROTTLING, ctypes.byref(state), ctypes.sizeof(state)
            ):
                log.info("EcoQoS not set for %s: error %s", pid, ctypes.get_last_error())
        finally:
            kernel32.CloseHandle(handle)

else:

    def eco_qos(pid: int) -> None:
        """Windows only."""
