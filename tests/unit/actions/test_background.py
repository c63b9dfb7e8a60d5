"""``background``: the job and a grandchild it starts (through a shell) run at nice 19 in the idle
I/O class, read from their own ``/proc/PID/stat`` and ``ioprio_get``; a job without it runs as
the app does."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.actions import ActionRunner
from domi_desktop.model import CommandAction, RunStatus
from tests.support.wine import wine_cannot

MakeRequest = Callable[..., Any]

PROBE = """
import ctypes, os, subprocess, sys
NR_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}[os.uname().machine]
stat = open(f"/proc/{os.getpid()}/stat").read()
nice = int(stat.rsplit(")", 1)[1].split()[16])  # field 19, counted after the name
libc = ctypes.CDLL(None, use_errno=True)
io_class = libc.syscall(NR_IOPRIO_GET, 1, 0) >> 13  # IOPRIO_WHO_PROCESS, this process
print(sys.argv[1], nice, io_class, flush=True)
if sys.argv[1] == "job":
    subprocess.run(["/bin/sh", "-c", f"'{sys.executable}' '{sys.argv[0]}' grandchild"], check=True)
"""


def run_probe(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path, background: bool
) -> dict[str, tuple[int, int]]:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    request = make_request(CommandAction(argv=(sys.executable, str(probe), "job")))
    if background:
        from dataclasses import replace

        request = replace(request, background=True)
    result = runner.run(request)
    assert result.status is RunStatus.succeeded, result.output_tail
    seen = {}
    for line in (result.output_tail or "").splitlines():
        who, nice, io_class = line.split()
        seen[who] = (int(nice), int(io_class))
    return seen


@pytest.mark.linux_only
def test_a_background_job_and_its_grandchild_run_at_nice_19_in_the_idle_io_class(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    seen = run_probe(runner, make_request, tmp_path, background=True)
    assert seen == {"job": (19, 3), "grandchild": (19, 3)}


@pytest.mark.linux_only
def test_a_job_not_in_the_background_runs_at_the_app_s_priority(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    seen = run_probe(runner, make_request, tmp_path, background=False)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen["job"][0] == mine and seen["grandchild"][0] == mine
    assert seen["job"][1] != 3


@pytest.mark.linux_only
def test_a_missing_program_is_still_could_not_start(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    from dataclasses import replace

    request = replace(make_request(CommandAction(argv=("no-such-program-here",))), background=True)
    result = runner.run(request)
    assert result.status is RunStatus.failed and result.reason is not None
    assert result.reason.startswith("could not start")


NO_IDLE_INHERITANCE = (
    "a child of an idle process starts at normal priority "
    "(CreateProcess's inheritance of IDLE_PRIORITY_CLASS)"
)

WINDOWS_PROBE = """
import ctypes, subprocess, sys
kernel32 = ctypes.windll.kernel32
kernel32.GetCurrentProcess.restype = ctypes.c_void_p
print(sys.argv[1], hex(kernel32.GetPriorityClass(ctypes.c_void_p(kernel32.GetCurrentProcess()))),
      flush=True)
if sys.argv[1] == "job":
    subprocess.run([sys.executable, sys.argv[0], "child"], check=True)
"""


def _priorities(runner: ActionRunner, make_request: MakeRequest, tmp_path: Path) -> list[str]:
    from dataclasses import replace

    probe = tmp_path / "probe.py"
    probe.write_text(WINDOWS_PROBE, encoding="utf-8")
    request = make_request(CommandAction(argv=(sys.executable, str(probe), "job")))
    result = runner.run(replace(request, background=True))
    assert result.status is RunStatus.succeeded, result.output_tail
    return (result.output_tail or "").split()


@pytest.mark.windows_only
def test_a_background_job_starts_in_the_idle_priority_class(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    assert _priorities(runner, make_request, tmp_path)[:2] == ["job", "0x40"]


@pytest.mark.windows_only
@wine_cannot(NO_IDLE_INHERITANCE)
def test_a_background_job_s_child_starts_in_the_idle_priority_class(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    assert _priorities(runner, make_request, tmp_path) == ["job", "0x40", "child", "0x40"]
