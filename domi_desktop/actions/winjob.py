"""A Windows Job Object around a job's processes: stopped as one, and gone when the app dies.

Why not what came before: ``CTRL_BREAK_EVENT`` cannot reach a process started with
``CREATE_NO_WINDOW`` (and the windowed app has no console to send it through, so the call raises),
and ``taskkill /T`` walks parent links, missing grandchildren whose parent already exited. A Job
Object holds every process the job starts (nested jobs work from Windows 8 on, so this holds even
when the app itself runs inside one), ``TerminateJobObject`` ends them all, and
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` ends them when the last handle closes, which the kernel does
for us when the app dies, however it dies.

The kernel32 calls go through the ``Kernel32`` protocol, so the tests on any OS fake them.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Protocol, cast

from domi_desktop.ffi import Signature, load_windows

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
"""``JobObjectExtendedLimitInformation`` in ``JOBOBJECTINFOCLASS``."""
PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001
PROCESS_SUSPEND_RESUME = 0x0800
CREATE_SUSPENDED = 0x00000004
"""``CreateProcess`` flag: the process exists but runs nothing until resumed (``resume``)."""
TERMINATED_EXIT_CODE = 1
"""The exit code of a process ended by ``terminate`` (what ``TerminateProcess`` callers use)."""


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = (
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    )


class IO_COUNTERS(ctypes.Structure):
    _fields_ = tuple(
        (name, ctypes.c_uint64)
        for name in (
            "ReadOperationCount",
            "WriteOperationCount",
            "OtherOperationCount",
            "ReadTransferCount",
            "WriteTransferCount",
            "OtherTransferCount",
        )
    )


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = (
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    )


class Kernel32(Protocol):
    """The kernel32 functions used here, as ``ctypes`` calls them (handles are ints or None)."""

    def CreateJobObjectW(self, attributes: None, name: None) -> int | None: ...
    def SetInformationJobObject(
        self, job: int, info_class: int, info: object, length: int
    ) -> int: ...
    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int | None: ...
    def AssignProcessToJobObject(self, job: int, process: int) -> int: ...
    def TerminateJobObject(self, job: int, exit_code: int) -> int: ...
    def CloseHandle(self, handle: int) -> int: ...


class NtDll(Protocol):
    """ntdll's ``NtResumeProcess``: resumes every thread of a process (``subprocess`` keeps no
    handle to the main thread, which ``ResumeThread`` would need)."""

    def NtResumeProcess(self, process: int) -> int: ...


class JobObject:
    """One job's processes. ``JobObject.around(pid)`` right after starting the process."""

    def __init__(self, kernel32: Kernel32, handle: int) -> None:
        self._kernel32 = kernel32
        self._handle: int | None = handle

    @classmethod
    def around(cls, pid: int, kernel32: Kernel32 | None = None) -> JobObject:
        """A new kill-on-close job holding process ``pid``; ``OSError`` if Windows refuses.

        Start the process with ``CREATE_SUSPENDED`` and ``resume`` it once it is in the job: a
        child it started in its first instant, before being assigned, would stay outside.
        """
        api = kernel32 or _kernel32()
        handle = api.CreateJobObjectW(None, None)
        if not handle:
            raise _error("CreateJobObjectW")
        job = cls(api, handle)
        try:
            info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            if not api.SetInformationJobObject(
                handle,
                JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                ctypes.byref(info),
                ctypes.sizeof(info),
            ):
                raise _error("SetInformationJobObject")
            process = api.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
            if not process:
                raise _error(f"OpenProcess({pid})")
            try:
                if not api.AssignProcessToJobObject(handle, process):
                    raise _error(f"AssignProcessToJobObject({pid})")
            finally:
                api.CloseHandle(process)
        except BaseException:
            job.close()
            raise
        return job

    def terminate(self) -> bool:
        """End every process in the job at once; False if it could not (already closed)."""
        if self._handle is None:
            return False
        return bool(self._kernel32.TerminateJobObject(self._handle, TERMINATED_EXIT_CODE))

    def close(self) -> None:
        """Close the handle: whatever is still in the job ends with it (kill-on-close)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._kernel32.CloseHandle(handle)


def resume(pid: int, kernel32: Kernel32 | None = None, ntdll: NtDll | None = None) -> None:
    """Let process ``pid``, started with ``CREATE_SUSPENDED``, run; ``OSError`` if it cannot."""
    api = kernel32 or _kernel32()
    nt = ntdll or _ntdll()
    process = api.OpenProcess(PROCESS_SUSPEND_RESUME, False, pid)
    if not process:
        raise _error(f"OpenProcess({pid})")
    try:
        status = nt.NtResumeProcess(process)
        if status != 0:
            raise OSError(f"NtResumeProcess({pid}) failed (NTSTATUS 0x{status & 0xFFFFFFFF:08x})")
    finally:
        api.CloseHandle(process)


def _error(call: str) -> OSError:
    code = _last_error()
    return OSError(f"{call} failed (Windows error {code})")


HANDLE, DWORD, BOOL = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
KERNEL32: dict[str, Signature] = {
    "CreateJobObjectW": ((ctypes.c_void_p, ctypes.c_wchar_p), HANDLE),
    "SetInformationJobObject": ((HANDLE, ctypes.c_int, ctypes.c_void_p, DWORD), BOOL),
    "OpenProcess": ((DWORD, BOOL, DWORD), HANDLE),
    "AssignProcessToJobObject": ((HANDLE, HANDLE), BOOL),
    "TerminateJobObject": ((HANDLE, ctypes.c_uint), BOOL),
    "CloseHandle": ((HANDLE,), BOOL),
}
NTDLL: dict[str, Signature] = {"NtResumeProcess": ((HANDLE,), ctypes.c_int32)}

if sys.platform == "win32":

    def _kernel32() -> Kernel32:
        return cast(Kernel32, load_windows("kernel32", KERNEL32))

    def _ntdll() -> NtDll:
        return cast(NtDll, load_windows("ntdll", NTDLL))

    def _last_error() -> int:
        return ctypes.get_last_error()

else:

    def _kernel32() -> Kernel32:
        raise OSError("Job Objects exist on Windows only")

    def _ntdll() -> NtDll:
        raise OSError("ntdll exists on Windows only")

    def _last_error() -> int:
        return 0
