"""Run a command: an explicit environment, its output captured, its whole process tree stoppable."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO

import psutil

from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import Outcome, RunControl, Wake, timed_out
from domi_desktop.actions.environment import job_environment
from domi_desktop.model import CommandAction, RunStatus

if sys.platform == "win32":
    from domi_desktop.actions.winjob import JobObject

    _CREATION_FLAGS = subprocess.CREATE_NO_WINDOW
else:
    _CREATION_FLAGS = 0

log = logging.getLogger(__name__)

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
            _die_with_app(_command_line(action, env), env, cwd),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if action.stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group (session), so the whole tree can be stopped at once.
            start_new_session=sys.platform != "win32",
            creationflags=_CREATION_FLAGS,
        )
    except OSError as error:
        return Outcome(RunStatus.failed, f"could not start: {_describe(error, action, env)}")
    tree = ProcessTree(process.pid)
    try:
        control.started(process.pid)
        return _supervise(process, tree, action, capture, control, timeout=timeout, grace=grace)
    finally:
        tree.close()


def _supervise(
    process: subprocess.Popen[bytes],
    tree: ProcessTree,
    action: CommandAction,
    capture: OutputCapture,
    control: RunControl,
    *,
    timeout: float | None,
    grace: float,
) -> Outcome:
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

    POSIX: the job leads a new session, so its process group holds its descendants. Windows: a Job
    Object holds them (``winjob``), and ends them if the app dies.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        if sys.platform == "win32":
            self._job: JobObject | None = None
            try:
                self._job = JobObject.around(pid)
            except OSError as error:
                log.warning("process %s runs outside a Job Object: %s", pid, error)

    def terminate(self) -> bool:
        """Ask the tree to stop; ``False`` when there was nobody left to ask (or no way to)."""
        if sys.platform == "win32":
            # A windowless job has no console for CTRL_BREAK_EVENT to reach: nothing to ask.
            return False
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self) -> None:
        """Stop the tree without asking."""
        if sys.platform == "win32":
            # First what the parent links still reach (a child started before the process joined
            # its Job Object is outside it), then the job, orphans included.
            _kill_descendants(self.pid)
            if self._job is not None:
                self._job.terminate()
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """The run is over; on Windows this ends what is still in its Job Object."""
        if sys.platform == "win32" and self._job is not None:
            self._job.close()


def _kill_descendants(pid: int) -> None:
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        for process in [*root.children(recursive=True), root]:
            with contextlib.suppress(psutil.Error):
                process.kill()


if sys.platform == "linux":

    def _die_with_app(
        command: str | list[str], env: Mapping[str, str], cwd: str
    ) -> str | list[str]:
        """The job gets SIGTERM when the app dies: util-linux's ``setpriv --pdeathsig`` asks the
        kernel for it and execs the job (the same process, so its pid is the job's).

        Not Python's ``preexec_fn``: with it, every start forks the whole app (page tables of
        100+ MB, the GIL held throughout) instead of vfork, and a child of a threaded process can
        hang before its exec (seen under libfaketime); hundreds of starts at a minute boundary
        froze the GUI. The kernel sends the signal when the THREAD that started the job exits:
        the run's worker thread, which lives until the job has been waited for. It reaches the
        job's own process, not what that one started: the next start of the app stops those
        (``leftovers``). Without a setpriv that knows ``--pdeathsig``, jobs start without it.
        """
        setpriv = _setpriv()
        if setpriv is None or isinstance(command, str):
            return command
        # Resolved here, as exec would, so that a missing program is still "could not start"
        # (an OSError from Popen) rather than setpriv's exit code 127.
        program = _resolve(command[0], env.get("PATH", os.defpath), cwd)
        return [setpriv, "--pdeathsig", "TERM", "--", program, *command[1:]]

    @functools.cache
    def _setpriv() -> str | None:
        found = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
        if found is None:
            return None
        try:
            probe = subprocess.run(
                [found, "--pdeathsig", "TERM", "--", "/bin/true"],
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return found if probe.returncode == 0 else None

    def _resolve(program: str, search: str, cwd: str) -> str:
        """``program`` as ``execvp`` finds it (relative to the job's ``cwd``), or the OSError that
        it would raise."""
        if os.sep in program:
            candidates = [os.path.join(cwd, program)]
        else:
            candidates = [os.path.join(cwd, d, program) for d in search.split(os.pathsep)]
        refused = False
        for candidate in candidates:
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
            refused = refused or os.path.exists(candidate)
        code = errno.EACCES if refused else errno.ENOENT
        raise OSError(code, os.strerror(code), program)

else:

    def _die_with_app(
        command: str | list[str], env: Mapping[str, str], cwd: str
    ) -> str | list[str]:
        """Windows: the Job Object does this. macOS has no such request of its own."""
        return command


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
