"""Who owns a running run, and whether that process is still alive.

A run left ``running`` by a process that died must become ``interrupted``; a run of another live
process (a second instance, a CLI) must be left alone. A pid alone is not an identity: after a
reboot or in a container the same pid comes back for another process. So an owner is the pid, a
random token drawn once per process (to tell this process from an earlier one with the same pid),
and, where the OS tells it cheaply, the process start time (to spot a pid reused by another one).
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Owner:
    pid: int
    token: str
    started: str | None
    """An OS-specific marker of this incarnation of ``pid`` (start time), or None where unknown."""


_this: Owner | None = None
_this_lock = threading.Lock()


def this_process() -> Owner:
    global _this
    pid = os.getpid()
    # Two threads must not draw two tokens: runs stamped with the loser's would look orphaned.
    with _this_lock:
        # A forked child inherits the module state but is another process: it gets its own.
        if _this is None or _this.pid != pid:
            _this = Owner(pid=pid, token=secrets.token_hex(8), started=_probe(pid)[1])
        return _this


def is_alive(owner: Owner) -> bool:
    me = this_process()
    if owner.pid == me.pid:
        return owner.token == me.token
    alive, started = _probe(owner.pid)
    if not alive:
        return False
    # Same pid, different start: the owner died and the pid was handed to someone else.
    return owner.started is None or started is None or owner.started == started


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    _STILL_ACTIVE = 259
    _ERROR_ACCESS_DENIED = 5

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    _kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    _kernel32.OpenProcess.restype = wintypes.HANDLE
    _kernel32.GetExitCodeProcess.argtypes = (wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD))
    _kernel32.GetExitCodeProcess.restype = wintypes.BOOL
    _kernel32.GetProcessTimes.argtypes = (wintypes.HANDLE, *[ctypes.POINTER(wintypes.FILETIME)] * 4)
    _kernel32.GetProcessTimes.restype = wintypes.BOOL
    _kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    _kernel32.CloseHandle.restype = wintypes.BOOL

    def _probe(pid: int) -> tuple[bool, str | None]:
        """(alive, start marker). No ``os.kill(pid, 0)`` here: on Windows it kills the process."""
        handle = _kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not handle:
            # Access denied means it exists (another user's or a protected process).
            return ctypes.get_last_error() == _ERROR_ACCESS_DENIED, None
        try:
            code = wintypes.DWORD()
            if not _kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True, None
            if code.value != _STILL_ACTIVE:
                return False, None
            creation, exited, kernel, user = (wintypes.FILETIME() for _ in range(4))
            if not _kernel32.GetProcessTimes(
                handle,
                ctypes.byref(creation),
                ctypes.byref(exited),
                ctypes.byref(kernel),
                ctypes.byref(user),
            ):
                return True, None
            return True, str((creation.dwHighDateTime << 32) | creation.dwLowDateTime)
        finally:
            _kernel32.CloseHandle(handle)

else:
    _PROC = Path("/proc")

    def _boot_id() -> str:
        try:
            return (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        except OSError:
            return ""

    _BOOT_ID = _boot_id()

    def _probe(pid: int) -> tuple[bool, str | None]:
        """(alive, start marker); the marker comes from Linux's /proc and is None elsewhere."""
        # 0 and negative pids address process groups in kill(): never a run owner.
        if pid <= 0:
            return False, None
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, OverflowError):  # no such process, or no such pid at all
            return False, None
        except PermissionError:
            pass  # it exists, it belongs to another user
        if not _BOOT_ID:
            return True, None
        try:
            stat = (_PROC / str(pid) / "stat").read_text()
        except FileNotFoundError:
            return False, None  # it exited between the two looks
        except OSError:
            return True, None
        # Fields after the parenthesised command name (which may itself contain spaces or ')').
        fields = stat.rpartition(")")[2].split()
        if len(fields) < 20:
            return True, None
        state, start_ticks = fields[0], fields[19]
        # A zombie answers kill(pid, 0) but has finished: its parent just has not reaped it yet.
        if state in ("Z", "X"):
            return False, None
        return True, f"{_BOOT_ID}:{start_ticks}"
