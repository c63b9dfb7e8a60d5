"""Command actions, run for real: argv or shell, explicit environment, output, exit codes, kills."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from domi_desktop.actions import ActionRunner, identity
from domi_desktop.actions.environment import POSIX_PATH
from domi_desktop.clock import SystemClock
from domi_desktop.model import CommandAction, RunStatus
from tests.unit.actions.conftest import is_gone, stopped_all

pytestmark = pytest.mark.posix_only  # POSIX shells and signals
if sys.platform != "win32":
    import resource

MakeRequest = Callable[..., Any]


def test_an_argv_runs_without_a_shell(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction(argv=("echo", "a  b", "$HOME", "*"))))
    assert result.status is RunStatus.succeeded
    assert result.exit_code == 0
    assert result.reason is None
    assert result.output_tail == "a  b $HOME *\n"


def test_a_shell_line_runs_with_sh(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction(shell="echo $((1 + 2)) | tr 3 x; echo $0")))
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "x\n/bin/sh\n"


def test_the_environment_is_explicit(
    runner: ActionRunner, make_request: MakeRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOMI_LEAKED_FROM_THE_APP", "leaked")
    monkeypatch.delenv("TMPDIR", raising=False)
    action = CommandAction(
        argv=("env",), env=(("GREETING", "hello"),), secret_env=(("API_TOKEN", "ignored"),)
    )
    result = runner.run(make_request(action, secrets={"API_TOKEN": "tok-abcdef"}))
    env = dict(line.split("=", 1) for line in result.output_tail.splitlines())
    assert set(env) == {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "SHELL", "GREETING", "API_TOKEN",
        "DOMI_RUN_ID", "DOMI_OWNER",
    }  # fmt: skip
    # The run's tags: what finds the job again if its pid never reached the database.
    assert env["DOMI_OWNER"] == identity.this_process().token
    assert env["DOMI_RUN_ID"].isdigit()
    assert env["PATH"] == POSIX_PATH
    assert env["HOME"] == os.path.expanduser("~")
    assert env["SHELL"] == "/bin/sh"
    assert env["LANG"] == os.environ.get("LANG", "C.UTF-8")
    assert env["GREETING"] == "hello"
    assert env["API_TOKEN"] == "***"  # it arrived, and was masked on the way out


def test_a_secret_reaches_the_job_unmasked(runner: ActionRunner, make_request: MakeRequest) -> None:
    action = CommandAction(shell='[ "$API_TOKEN" = tok-abcdef ] && echo match')
    result = runner.run(make_request(action, secrets={"API_TOKEN": "tok-abcdef"}))
    assert result.output_tail == "match\n"


def test_tmpdir_is_passed_on_when_set(
    runner: ActionRunner, make_request: MakeRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", "/var/tmp")
    result = runner.run(make_request(CommandAction(shell='echo "$TMPDIR"')))
    assert result.output_tail == "/var/tmp\n"


def test_a_user_can_set_path(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "greet"
    script.write_text("#!/bin/sh\necho greeted\n")
    script.chmod(0o755)
    action = CommandAction(argv=("greet",), env=(("PATH", f"{bin_dir}:{POSIX_PATH}"),))
    result = runner.run(make_request(action))
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "greeted\n"


def test_it_runs_in_the_working_directory(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    result = runner.run(make_request(CommandAction(argv=("pwd",), cwd=str(tmp_path))))
    assert result.output_tail == f"{tmp_path}\n"


def test_without_a_working_directory_it_runs_in_home_and_tilde_is_home(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    (tmp_path / "reports").mkdir()
    home = (("HOME", str(tmp_path)),)
    in_home = runner.run(make_request(CommandAction(argv=("pwd",), env=home)))
    assert in_home.output_tail == f"{tmp_path}\n"
    below = runner.run(make_request(CommandAction(argv=("pwd",), cwd="~/reports", env=home)))
    assert below.output_tail == f"{tmp_path}/reports\n"


def test_a_missing_working_directory_fails_the_run(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    # A program found on PATH, one named relative to the missing folder, and a shell line.
    for action in (
        CommandAction(argv=("pwd",), cwd=str(missing)),
        CommandAction(argv=("./report.sh",), cwd=str(missing)),
        CommandAction(shell="pwd", cwd=str(missing)),
    ):
        result = runner.run(make_request(action))
        assert result.status is RunStatus.failed
        assert result.reason == f"the working directory does not exist: {missing}"
        assert result.exit_code is None


def test_stdin_is_fed_from_the_action(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction(argv=("cat",), stdin="line 1\nline 2\n")))
    assert result.output_tail == "line 1\nline 2\n"


def test_a_job_may_ignore_its_stdin(runner: ActionRunner, make_request: MakeRequest) -> None:
    big = "x" * 1_000_000  # more than a pipe holds: the writer must not block the run
    result = runner.run(make_request(CommandAction(argv=("true",), stdin=big)))
    assert result.status is RunStatus.succeeded


def test_stdin_is_dev_null_by_default(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction(shell="cat; readlink /proc/self/fd/0")))
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "/dev/null\n"


def test_stderr_is_merged_into_the_output(runner: ActionRunner, make_request: MakeRequest) -> None:
    result = runner.run(make_request(CommandAction(shell="echo out; echo err >&2; echo out2")))
    assert result.output_tail == "out\nerr\nout2\n"


def test_a_non_zero_exit_fails_with_the_code(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    result = runner.run(make_request(CommandAction(shell="echo partial; exit 3")))
    assert result.status is RunStatus.failed
    assert result.exit_code == 3
    assert result.reason == "exit code 3"
    assert result.output_tail == "partial\n[domi-desktop] exit code 3\n"


def test_a_job_killed_by_a_signal_says_which(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    result = runner.run(make_request(CommandAction(shell="kill -9 $$")))
    assert result.status is RunStatus.failed
    assert result.exit_code == -9
    assert result.reason == "killed by signal 9 (SIGKILL)"


def test_a_missing_program_is_a_failed_result_not_an_exception(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    result = runner.run(make_request(CommandAction(argv=("domi-no-such-program", "x"))))
    assert result.status is RunStatus.failed
    assert result.exit_code is None
    assert result.reason == (
        f"could not start: No such file or directory: 'domi-no-such-program' (PATH={POSIX_PATH})"
    )
    assert result.output_tail == f"[domi-desktop] {result.reason}\n"


@pytest.mark.linux_only  # prctl is Linux's
def test_on_linux_the_job_itself_gets_sigterm_when_the_app_dies(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    # PR_GET_PDEATHSIG (2) of the job's own process: the signal the kernel sends it when the
    # thread that started it exits.
    asks = (
        "import ctypes, os, sys; s = ctypes.c_int(); "
        "ctypes.CDLL(None).prctl(2, ctypes.byref(s), 0, 0, 0); print(s.value, os.getpid())"
    )
    running = runner.start(make_request(CommandAction(argv=(sys.executable, "-c", asks))), print)
    result = running.wait(30)
    assert result is not None and result.status is RunStatus.succeeded, result
    signal_number, pid = result.output_tail.split()
    assert int(signal_number) == signal.SIGTERM
    assert int(pid) == running.pid  # the job's own process, not a wrapper around it


def test_a_program_that_is_not_executable_is_refused_by_name(
    runner: ActionRunner, make_request: MakeRequest, tmp_path: Path
) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    result = runner.run(make_request(CommandAction(argv=("./job.sh",), cwd=str(tmp_path))))
    assert result.status is RunStatus.failed
    assert result.reason == "could not start: Permission denied: './job.sh'"
    script.chmod(0o700)
    result = runner.run(make_request(CommandAction(argv=("./job.sh",), cwd=str(tmp_path))))
    assert (result.status, result.output_tail) == (RunStatus.succeeded, "hi\n")


def test_the_log_file_has_the_output_and_mode_0600(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    request = make_request(CommandAction(shell="echo one; echo two >&2; exit 1"), run_id=42)
    request.log_path.parent.mkdir(parents=True)
    request.log_path.write_text("an older run's log")
    request.log_path.chmod(0o644)
    result = runner.run(request)
    assert result.log_path == request.log_path
    assert request.log_path.read_text() == "one\ntwo\n[domi-desktop] exit code 1\n"
    assert stat.S_IMODE(request.log_path.stat().st_mode) == 0o600


def test_the_tail_is_the_last_4_kb_of_the_log(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    result = runner.run(make_request(CommandAction(shell="seq 1 5000")))
    log = result.log_path.read_bytes()
    assert log == b"".join(b"%d\n" % i for i in range(1, 5001))
    assert result.output_tail.encode() == log[-4096:]


def test_a_secret_in_the_output_is_masked_in_the_log_and_the_tail(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    action = CommandAction(shell='echo "token=$API_TOKEN"; echo "$API_TOKEN" >&2')
    result = runner.run(make_request(action, secrets={"API_TOKEN": "tok-abcdef"}))
    assert result.output_tail == "token=***\n***\n"
    assert b"tok-abcdef" not in result.log_path.read_bytes()


def test_a_secret_printed_byte_by_byte_is_still_masked(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    # Each byte is its own write, a few ms apart: the value reaches the reader in many chunks.
    code = (
        "import os, sys, time\n"
        "for byte in ('<' + os.environ['API_TOKEN'] + '>').encode():\n"
        "    sys.stdout.buffer.write(bytes([byte])); sys.stdout.flush(); time.sleep(0.005)\n"
    )
    action = CommandAction(argv=(sys.executable, "-c", code))
    result = runner.run(make_request(action, secrets={"API_TOKEN": "tok-slowly-printed"}))
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "<***>"
    assert result.log_path.read_bytes() == b"<***>"


def test_a_timeout_kills_the_whole_tree_promptly(
    runner: ActionRunner,
    make_request: MakeRequest,
    tmp_path: Path,
    wait_until: Callable[[Callable[[], bool]], None],
    gone: Callable[[int], bool],
) -> None:
    action = CommandAction(shell="sleep 300 & echo $! > child.pid; sleep 300", cwd=str(tmp_path))
    running = runner.start(make_request(action, timeout=1), lambda _result: None)
    # The shell creates the file before it writes the pid into it: wait for the whole line.
    pid_file = tmp_path / "child.pid"
    wait_until(
        lambda: (
            running.pid is not None and pid_file.exists() and pid_file.read_text().endswith("\n")
        )
    )
    assert running.pid is not None
    pids = [running.pid, int((tmp_path / "child.pid").read_text())]
    result = running.wait(60)  # not the 300 s of its processes
    assert result is not None
    assert result.status is RunStatus.timed_out
    assert result.reason == "timed out after 1s"
    assert result.exit_code == -15
    wait_until(lambda: all(gone(pid) for pid in pids))


def test_a_tree_that_ignores_sigterm_is_killed_after_the_grace(
    make_request: MakeRequest,
    tmp_path: Path,
    gone: Callable[[int], bool],
    wait_until: Callable[[Callable[[], bool]], None],
) -> None:
    runner = ActionRunner(SystemClock(), kill_grace=0.3)
    action = CommandAction(
        shell="trap '' TERM; sleep 300 & echo $! > child.pid; sleep 300", cwd=str(tmp_path)
    )
    running = runner.start(make_request(action, timeout=0.5), lambda _result: None)
    try:
        result = running.wait(60)  # not the 300 s of its processes
    finally:
        stopped_all(runner)
    assert result is not None
    assert result.status is RunStatus.timed_out
    assert result.exit_code == -9  # the SIGKILL after the grace, not an exit of its own
    wait_until(lambda: gone(int((tmp_path / "child.pid").read_text())))


def test_processes_left_behind_are_stopped_when_the_job_exits(
    runner: ActionRunner,
    make_request: MakeRequest,
    tmp_path: Path,
    gone: Callable[[int], bool],
    wait_until: Callable[[Callable[[], bool]], None],
) -> None:
    # As launchd and systemd do; else the leftover would hold the output open for 300 s.
    action = CommandAction(shell="sleep 300 & echo $! > child.pid; echo done", cwd=str(tmp_path))
    result = runner.start(make_request(action), lambda _result: None).wait(60)
    assert result is not None  # not held open for the leftover's 300 s
    assert result.status is RunStatus.succeeded
    assert result.output_tail == "done\n"
    wait_until(lambda: gone(int((tmp_path / "child.pid").read_text())))


def test_a_process_that_left_the_group_does_not_hold_up_the_run(
    make_request: MakeRequest, tmp_path: Path
) -> None:
    runner = ActionRunner(SystemClock(), kill_grace=0.2)
    action = CommandAction(
        shell="setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' & "
        "while [ ! -s escaped.pid ]; do sleep 0.01; done; echo started",
        cwd=str(tmp_path),
    )
    try:
        result = runner.start(make_request(action), lambda _result: None).wait(60)
        assert result is not None
        assert result.status is RunStatus.succeeded
        assert "the output is still held open" in result.output_tail
        # Ended while the escaped process (30 s) still held the output: not held up by it.
        assert not is_gone(int((tmp_path / "escaped.pid").read_text()))
    finally:
        stopped_all(runner)
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            os.kill(int((tmp_path / "escaped.pid").read_text()), 9)


def test_a_log_that_stops_being_writable_does_not_stop_the_run(
    runner: ActionRunner, make_request: MakeRequest
) -> None:
    # A full disk, for real: files of this process may not grow past 64 KiB meanwhile.
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, limits[1]))
    try:
        result = runner.run(make_request(CommandAction(shell="seq 1 100000; exit 4")))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert result.status is RunStatus.failed
    assert result.reason == "exit code 4"
    assert result.output_tail.endswith(
        "100000\n[domi-desktop] exit code 4\n"
        "[domi-desktop] the log file could not be written: File too large\n"
    )
    assert result.log_path.stat().st_size <= 65536


JOBS_BEYOND_THE_LIMIT = """
import json, pathlib, resource, sys, time
from domi_desktop.actions import ActionRequest, ActionRunner
from domi_desktop.clock import SystemClock
from domi_desktop.model import CommandAction

here = pathlib.Path(sys.argv[1])
wait = f"while [ ! -e {here / 'go'} ]; do sleep 0.02; done; ulimit -n"
runner = ActionRunner(SystemClock())
running = [
    runner.start(ActionRequest(CommandAction(shell=wait), n, here / f"{n}.log"), lambda _r: None)
    for n in range(60)
]
deadline = time.monotonic() + 120
while sum(r.pid is not None or r.wait(0) is not None for r in running) < 60:
    assert time.monotonic() < deadline
    time.sleep(0.02)
(here / "go").touch()
results = [r.wait(120) for r in running]
print(json.dumps({
    "app": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    "jobs": sorted({(r.status.value, r.reason, r.output_tail) for r in results}),
}))
"""


@pytest.mark.linux_only  # prlimit is Linux's
def test_jobs_beyond_the_sessions_file_limit_all_run_and_each_keeps_that_limit(
    tmp_path: Path,
) -> None:
    # A session whose soft limit is 64 files: 60 jobs at once hold 180 here.
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        done = subprocess.run(
            [sys.executable, "-c", JOBS_BEYOND_THE_LIMIT, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard)),
        )
    finally:  # its jobs (sessions of their own) end even if it failed before letting them go
        (tmp_path / "go").touch()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["app"] > 64
    assert report["jobs"] == [["succeeded", None, "64\n"]]
