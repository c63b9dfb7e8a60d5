"""The Job Object code at its boundary: every kernel32 call faked, on any OS."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from domi_desktop.actions import winjob
from domi_desktop.actions.winjob import (
    JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    PROCESS_SET_QUOTA,
    PROCESS_SUSPEND_RESUME,
    PROCESS_TERMINATE,
    JobObject,
    resume,
)

JOB, PROCESS = 100, 200


class FakeKernel32:
    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.calls: list[tuple[Any, ...]] = []
        self.limits: int | None = None

    def _result(self, name: str, value: int) -> int:
        return 0 if self.fail == name else value

    def CreateJobObjectW(self, attributes: None, name: None) -> int | None:
        self.calls.append(("CreateJobObjectW", attributes, name))
        return self._result("CreateJobObjectW", JOB) or None

    def SetInformationJobObject(self, job: int, info_class: int, info: object, length: int) -> int:
        structure = info._obj  # type: ignore[attr-defined]  # what ctypes.byref points at
        assert isinstance(structure, JOBOBJECT_EXTENDED_LIMIT_INFORMATION)
        self.limits = structure.BasicLimitInformation.LimitFlags
        self.calls.append(("SetInformationJobObject", job, info_class, length))
        return self._result("SetInformationJobObject", 1)

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int | None:
        self.calls.append(("OpenProcess", access, inherit, pid))
        return self._result("OpenProcess", PROCESS) or None

    def AssignProcessToJobObject(self, job: int, process: int) -> int:
        self.calls.append(("AssignProcessToJobObject", job, process))
        return self._result("AssignProcessToJobObject", 1)

    def TerminateJobObject(self, job: int, exit_code: int) -> int:
        self.calls.append(("TerminateJobObject", job, exit_code))
        return 1

    def CloseHandle(self, handle: int) -> int:
        self.calls.append(("CloseHandle", handle))
        return 1


def test_it_puts_the_process_in_a_new_kill_on_close_job_and_closes_the_process_handle() -> None:
    kernel = FakeKernel32()
    JobObject.around(4321, kernel)
    assert kernel.calls == [
        ("CreateJobObjectW", None, None),
        (
            "SetInformationJobObject",
            JOB,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION),
        ),
        ("OpenProcess", PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, 4321),
        ("AssignProcessToJobObject", JOB, PROCESS),
        ("CloseHandle", PROCESS),
    ]
    assert kernel.limits == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the 64-bit layout")
def test_its_structure_has_the_size_windows_expects_on_64_bit() -> None:
    # sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) in the Windows SDK headers, x64.
    assert ctypes.sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == 144


def test_terminate_ends_the_job_and_close_closes_its_handle_once() -> None:
    kernel = FakeKernel32()
    job = JobObject.around(1, kernel)
    kernel.calls.clear()
    assert job.terminate()
    job.close()
    job.close()
    assert not job.terminate()
    assert kernel.calls == [("TerminateJobObject", JOB, 1), ("CloseHandle", JOB)]


@pytest.mark.parametrize(
    "failing", ["SetInformationJobObject", "OpenProcess", "AssignProcessToJobObject"]
)
def test_a_refused_call_raises_naming_it_and_leaves_no_handle_open(
    failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(winjob, "_last_error", lambda: 5)
    kernel = FakeKernel32(fail=failing)
    with pytest.raises(OSError, match=rf"{failing}.* failed \(Windows error 5\)"):
        JobObject.around(7, kernel)
    opened = [call for call in kernel.calls if call[0] in ("CreateJobObjectW", "OpenProcess")]
    closed = [call for call in kernel.calls if call[0] == "CloseHandle"]
    assert len(closed) == len(opened) - (failing == "OpenProcess")


def test_no_job_object_when_windows_refuses_to_create_one() -> None:
    with pytest.raises(OSError, match="CreateJobObjectW failed"):
        JobObject.around(7, FakeKernel32(fail="CreateJobObjectW"))


class FakeNtDll:
    def __init__(self, kernel: FakeKernel32, status: int = 0) -> None:
        self.kernel, self.status = kernel, status

    def NtResumeProcess(self, process: int) -> int:
        self.kernel.calls.append(("NtResumeProcess", process))
        return self.status


def test_resume_lets_the_suspended_process_run_and_closes_its_handle() -> None:
    kernel = FakeKernel32()
    resume(4321, kernel, FakeNtDll(kernel))
    assert kernel.calls == [
        ("OpenProcess", PROCESS_SUSPEND_RESUME, False, 4321),
        ("NtResumeProcess", PROCESS),
        ("CloseHandle", PROCESS),
    ]


def test_a_refused_resume_raises_with_its_status_and_closes_the_handle() -> None:
    kernel = FakeKernel32()
    with pytest.raises(OSError, match=r"NtResumeProcess\(4321\) failed \(NTSTATUS 0xc0000022\)"):
        resume(4321, kernel, FakeNtDll(kernel, status=-0x3FFFFFDE))
    assert kernel.calls[-1] == ("CloseHandle", PROCESS)
