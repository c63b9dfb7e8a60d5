"""Run a job "in the background": the lowest CPU and disk priority, for its whole process tree.

Linux: nice 19 and the idle I/O class, set by ``nice`` and ``ionice`` execing the job in the same
process (its pid stays the job's), so that no child it forks can be quicker than the change:
both are inherited. macOS: ``taskpolicy -b`` (``PRIO_DARWIN_BG``: low CPU, throttled I/O and
network), inherited too. Windows: ``IDLE_PRIORITY_CLASS`` at creation (children of an idle
process start idle) and EcoQoS (power throttling) set before the suspended process is resumed.
Where a tool is missing the job runs at normal priority and the log says why.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import shutil
import sys

from domi_desktop.ffi import Signature, load_windows

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


_HANDLE, _DWORD, _BOOL = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
KERNEL32: dict[str, Signature] = {
    "OpenProcess": ((_DWORD, _BOOL, _DWORD), _HANDLE),
    "SetProcessInformation": ((_HANDLE, ctypes.c_int32, ctypes.c_void_p, _DWORD), _BOOL),
    "SetPriorityClass": ((_HANDLE, _DWORD), _BOOL),
    "CloseHandle": ((_HANDLE,), _BOOL),
}
_PROCESS_POWER_THROTTLING = 4  # ProcessPowerThrottling in PROCESS_INFORMATION_CLASS
_THROTTLE_EXECUTION_SPEED = 0x1
_PROCESS_SET_INFORMATION = 0x0200


class _Throttling(ctypes.Structure):
    """``PROCESS_POWER_THROTTLING_STATE``."""

    _fields_ = (("Version", ctypes.c_uint32), ("ControlMask", ctypes.c_uint32),
                ("StateMask", ctypes.c_uint32))  # fmt: skip


def lowest_priority(pid: int) -> None:
    """The idle priority class and EcoQoS for the (still suspended) job. The class is also asked
    for at creation (``creation_flags``); set again here, where a failure can be told (Wine
    keeps the creation flag's class to itself). EcoQoS: Windows 11 runs the job on efficient
    cores at a low clock; older Windows has no such class, and the idle priority holds."""
    if sys.platform != "win32":
        return
    try:
        kernel32 = load_windows("kernel32", KERNEL32)
    except OSError as error:
        log.info("background priority not set: %s", error)
        return
    handle = kernel32.OpenProcess(_PROCESS_SET_INFORMATION, False, pid)
    if not handle:
        return
    try:
        if not kernel32.SetPriorityClass(handle, IDLE_PRIORITY_CLASS):
            log.info("idle priority not set for %s: error %s", pid, ctypes.get_last_error())
        state = _Throttling(1, _THROTTLE_EXECUTION_SPEED, _THROTTLE_EXECUTION_SPEED)
        size = ctypes.sizeof(state)
        if not kernel32.SetProcessInformation(
            handle, _PROCESS_POWER_THROTTLING, ctypes.addressof(state), size
        ):
            log.info("EcoQoS not set for %s: error %s", pid, ctypes.get_last_error())
    finally:
        kernel32.CloseHandle(handle)
