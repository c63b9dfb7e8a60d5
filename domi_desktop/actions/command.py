"""Run a command: an explicit environment, its output captured, its whole process tree stoppable."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO

from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import Outcome, RunControl, Wake, timed_out
from domi_desktop.actions.environment import job_environment
from domi_desktop.model import CommandAction, RunStatus

if sys.platform == "win32":
    _NEW_GROUP_FLAGS = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
else:
    _NEW_GROUP_FLAGS = 0

KILL_WAIT = 2.0
"""Seconds to wait for the tree to go away after the forceful kill, before giving up on it."""

_READ_SIZE = 65536


def run_command(
    action: CommandAction,
    secrets: Mapping[str, str],
    capture: OutputCapture,
    control: RunControl,
    *,
    timeout: float | None,
    grace: float,
) -> Outcome:
    """Run ``action`` to its end, its timeout or a stop request; ``secrets``: variable → value."""
    env = job_environment(action, secrets)
    cwd = _working_directory(action.cwd, env.get("HOME") or os.path.expanduser("~"))
    if not os.path.isdir(cwd):
        return Outcome(RunStatus.failed, f"the working directory does not exist: {cwd}")
    try:
        process = subprocess.Popen(
            _command_line(action, env),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if action.stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group (session), so the whole tree can be stopped at once.
            start_new_session=sys.platform != "win32",
            creationflags=_NEW_GROUP_FLAGS,
        )
    except OSError as error:
        return Outcome(RunStatus.failed, f"could not start: {_describe(error, action, env)}")
    control.pid = process.pid
    tree = ProcessTree(process.pid)
    exited = threading.Event()
    output_closed = threading.Event()
    stdin = None if action.stdin is None else action.stdin.encode()
    helpers = [
        threading.Thread(target=_pump, args=(process.stdout, capture, output_closed, control)),
        threading.Thread(target=_feed_and_wait, args=(process, stdin, exited, control)),
    ]
    for helper in helpers:
        helper.daemon = True
        helper.start()

    wake = control.wait(exited.is_set, timeout, stoppable=True)

    def finished() -> bool:
        return exited.is_set() and output_closed.is_set()

    # Also after a normal exit: what the job left behind in its group is stopped, as launchd
    # (AbandonProcessGroup=false) and systemd (KillMode=control-group) do; a leftover holding the
    # output pipe would otherwise keep the run going forever.
    if tree.terminate():
        control.wait(finished, grace, stoppable=False)
    if not finished():
        tree.kill()
        control.wait(finished, KILL_WAIT, stoppable=False)
    if not output_closed.is_set():
        capture.note(
            "the output is still held open by a process outside the job's process group "
            "(it called setsid?); the rest of it is not captured"
        )

    if wake is Wake.stopped:
        return Outcome(RunStatus.interrupted, control.stop_reason, process.returncode)
    if wake is Wake.deadline and timeout is not None:
        return timed_out(timeout, process.returncode)
    code = process.wait()  # it has exited: that is what ended the wait
    if code == 0:
        return Outcome(RunStatus.succeeded, None, code)
    if code < 0:
        return Outcome(RunStatus.failed, f"killed by signal {-code} ({_signal_name(-code)})", code)
    return Outcome(RunStatus.failed, f"exit code {code}", code)


class ProcessTree:
    """A job's process and everything it started, short of processes that left on purpose.

    POSIX: the job leads a new session, so its process group holds its descendants. Windows: the
    job heads a new process group, and ``taskkill /T`` walks the tree of child processes.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def terminate(self) -> bool:
        """Ask the tree to stop; ``False`` when there was nobody left to ask."""
        if sys.platform == "win32":
            try:
                os.kill(self.pid, signal.CTRL_BREAK_EVENT)
            except OSError:  # gone, or no console to deliver the event through
                return False
            return True
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self) -> None:
        """Stop the tree without asking."""
        if sys.platform == "win32":
            subprocess.run(
                ["taskkill", "/T", "/F", "/PID", str(self.pid)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                creationflags=subprocess.CREATE_NO_WINDOW,
                check=False,
            )
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


def _working_directory(cwd: str | None, home: str) -> str:
    # cron starts jobs in the home directory; so do relative paths and a leading ~ (the job's HOME).
    if cwd is None or cwd == "~":
        return home
    if cwd.startswith(("~/", "~" + os.sep)):
        cwd = cwd[2:]
    return os.path.join(home, cwd)


def _command_line(action: CommandAction, env: Mapping[str, str]) -> str | list[str]:
    if sys.platform == "win32":
        if action.shell is not None:
            # cmd's own quoting rule for /s /c "...": the outer quotes are stripped, nothing else.
            return f'"{env.get("COMSPEC", "cmd.exe")}" /d /s /c "{action.shell}"'
        # CreateProcess searches the app's PATH, not the job's: resolve it with the job's.
        program = shutil.which(action.argv[0], path=env.get("PATH")) or action.argv[0]
        return [program, *action.argv[1:]]
    if action.shell is not None:
        return ["/bin/sh", "-c", action.shell]
    return list(action.argv)


def _describe(error: OSError, action: CommandAction, env: Mapping[str, str]) -> str:
    text = f"{error.strerror}: {error.filename!r}" if error.filename else str(error)
    program = action.argv[0] if action.argv else ""
    if isinstance(error, FileNotFoundError) and program and os.sep not in program:
        # The most common surprise of an explicit environment: the program is not on its PATH.
        text += f" (PATH={env.get('PATH', '')})"
    return text


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _pump(
    stream: IO[bytes], capture: OutputCapture, closed: threading.Event, control: RunControl
) -> None:
    try:
        while chunk := os.read(stream.fileno(), _READ_SIZE):
            capture.write(chunk)
    except OSError:
        pass  # a broken pipe: that is its end
    finally:
        stream.close()
        closed.set()
        control.notify()


def _feed_and_wait(
    process: subprocess.Popen[bytes],
    stdin: bytes | None,
    exited: threading.Event,
    control: RunControl,
) -> None:
    if process.stdin is not None and stdin is not None:
        try:
            with process.stdin:
                process.stdin.write(stdin)
        except BrokenPipeError:
            pass  # the job exited without reading all of its input: its choice
    process.wait()
    exited.set()
    control.notify()
