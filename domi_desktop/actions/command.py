"""Run a command: an explicit environment, its output captured, its whole process tree stoppable."""

from __future__ import annotations

import errno
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO

from domi_desktop.actions import priority, warden
from domi_desktop.actions.capture import OutputCapture
from domi_desktop.actions.control import Outcome, RunControl, Wake, timed_out
from domi_desktop.actions.environment import job_environment
from domi_desktop.actions.pause import RunningClock, pause_tree, resume_tree
from domi_desktop.actions.spawn import die_with_app, give_back_file_limit, room_for_jobs
from domi_desktop.actions.supervisor import Supervisor, Timer
from domi_desktop.actions.tree import ProcessTree
from domi_desktop.model import WARDEN_STOPPED, CommandAction, RunStatus

if sys.platform == "win32":
    from domi_desktop.actions.winjob import CREATE_SUSPENDED

    # Suspended until it is in its Job Object (ProcessTree.let_run): a child started before would
    # be outside, out of reach of a stop.
    _CREATION_FLAGS = subprocess.CREATE_NO_WINDOW | CREATE_SUSPENDED
else:
    _CREATION_FLAGS = 0

log = logging.getLogger(__name__)

KILL_WAIT = 2.0
"""Seconds to wait for the tree to go away after the forceful kill, before giving up on it."""

_READ_SIZE = 65536


class CommandJob:
    """One command's run, looked after by the ``Supervisor``: started, its output captured, its
    whole process tree stopped at its end, its timeout or a stop request; ``on_end`` gets the
    outcome once. Every method runs on the supervisor's thread.
    """

    def __init__(
        self,
        supervisor: Supervisor,
        action: CommandAction,
        secrets: Mapping[str, str],
        capture: OutputCapture,
        control: RunControl,
        *,
        timeout: float | None,
        grace: float,
        on_end: Callable[[Outcome], None],
        tags: Mapping[str, str] | None = None,
        background: bool = False,
    ) -> None:
        """``tags``: what the job's environment carries to be found again (``job_tags``);
        ``background``: the lowest CPU and disk priority for its whole tree (``priority``)."""
        self._background = background
        self._supervisor = supervisor
        self._tags = tags
        self._action = action
        self._secrets = secrets
        self._capture = capture
        self._control = control
        self._timeout = timeout
        self._grace = grace
        self._on_end = on_end
        self._process: subprocess.Popen[bytes] | None = None
        self._tree: ProcessTree | None = None
        self._exited = False
        self._output_closed = False
        self._wake: Wake | None = None
        """Why the job is being ended (None while it runs)."""
        self._timer: Timer | None = None
        """The one deadline that holds now (the timeout, the grace, the wait after the kill)."""
        self._ended = False
        self._running = RunningClock(timeout)

    def start(self) -> None:
        self._guard(self._start)()

    def _start(self) -> None:
        action = self._action
        env = job_environment(action, self._secrets, self._tags)
        cwd = _working_directory(action.cwd, env.get("HOME") or os.path.expanduser("~"))
        limits = room_for_jobs()
        try:
            process = subprocess.Popen(
                die_with_app(_command_line(action, env, self._background), env, cwd),
                cwd=cwd,
                env=env,
                stdin=_devnull() if action.stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                bufsize=0,  # read with os.read: a buffer would be 8 KB a running job for nothing
                # Its own process group (session), so the whole tree can be stopped at once.
                start_new_session=sys.platform != "win32",
                creationflags=_CREATION_FLAGS | priority.creation_flags(self._background),
            )
        except OSError as error:
            # Looked at only now: a start is the usual case, and a stat less for each.
            if not os.path.isdir(cwd):
                reason = f"the working directory does not exist: {cwd}"
            else:
                reason = f"could not start: {_describe(error, action, env)}"
            self._end(Outcome(RunStatus.failed, reason))
            return
        give_back_file_limit(process.pid, limits)
        tree = ProcessTree(process.pid)
        if self._background:
            priority.lowest_priority(process.pid)
        try:
            tree.let_run()
        except OSError as error:
            process.kill()
            process.wait()
            tree.close()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
            self._end(Outcome(RunStatus.failed, f"could not start: {error}"))
            return
        self._process = process
        self._tree = tree
        self._control.started(process.pid)
        if process.stdin is not None and action.stdin is not None:
            threading.Thread(
                target=_feed, args=(process.stdin, action.stdin.encode()), daemon=True
            ).start()
        self._watch_output(process)
        self._watch_exit(process)
        self._control.on_stop(lambda: self._supervisor.call_soon(self._guard(self._stopped)))
        self._control.on_pause(
            lambda paused: self._supervisor.call_soon(self._guard(lambda: self._pause(paused)))
        )
        if self._timeout is not None:
            self._after(self._timeout, lambda: self._ending(Wake.deadline))

    def _pause(self, paused: bool) -> None:
        """Pause the tree where it is, its timeout with it, or let both go on."""
        if self._wake is not None or self._tree is None or paused == self._running.paused:
            return
        if paused:
            self._running.pause()
            pause_tree(self._tree.pid)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        left = self._running.resume()
        resume_tree(self._tree.pid)
        if left is not None:
            self._after(left, lambda: self._ending(Wake.deadline))

    def _guard(self, handler: Callable[[], None]) -> Callable[[], None]:
        """``handler``, ending the run if it fails: a bug must not leave it running forever."""

        def guarded() -> None:
            try:
                handler()
            except Exception as error:
                log.exception("run of %r: supervising the job failed", self._action)
                if self._tree is not None:
                    self._tree.kill()
                reason = f"internal error: {type(error).__name__}: {error}"
                self._end(Outcome(RunStatus.failed, reason))

        return guarded

    def _after(self, delay: float, then: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._supervisor.call_later(delay, self._guard(then))

    # -- events ------------------------------------------------------------------------------

    def _watch_output(self, process: subprocess.Popen[bytes]) -> None:
        stream = process.stdout
        assert stream is not None  # stdout=PIPE
        if sys.platform == "win32":  # Windows' select() cannot watch a pipe: a thread reads it
            threading.Thread(target=self._pump, args=(stream,), daemon=True).start()
            return
        os.set_blocking(stream.fileno(), False)
        self._supervisor.watch(stream.fileno(), self._guard(lambda: self._read(stream)))

    def _read(self, stream: IO[bytes]) -> None:
        try:
            chunk = os.read(stream.fileno(), _READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""  # a broken pipe: that is its end
        if chunk:
            # Also after the run has ended (a process that left the group holds the pipe): the
            # closed capture drops it; closing the pipe instead would kill that process.
            self._capture.write(chunk)
            return
        self._supervisor.unwatch(stream.fileno())
        stream.close()
        self._output_closed_now()

    def _pump(self, stream: IO[bytes]) -> None:
        try:
            while chunk := os.read(stream.fileno(), _READ_SIZE):
                self._capture.write(chunk)
        except OSError:
            pass  # a broken pipe: that is its end
        finally:
            stream.close()
            self._supervisor.call_soon(self._guard(self._output_closed_now))

    def _output_closed_now(self) -> None:
        self._output_closed = True
        self._check()

    def _watch_exit(self, process: subprocess.Popen[bytes]) -> None:
        if sys.platform == "linux":
            try:
                pidfd = os.pidfd_open(process.pid)
            except OSError:  # a kernel before 5.3: a thread waits instead
                pass
            else:

                def reap() -> None:
                    self._supervisor.unwatch(pidfd)
                    os.close(pidfd)
                    process.wait()  # it has exited: this only reaps it
                    self._exited_now()

                self._supervisor.watch(pidfd, self._guard(reap))
                return

        def wait() -> None:
            process.wait()
            self._supervisor.call_soon(self._guard(self._exited_now))

        threading.Thread(target=wait, daemon=True).start()

    def _exited_now(self) -> None:
        self._exited = True
        if self._wake is None:
            self._ending(Wake.done)
        else:
            self._check()

    def _stopped(self) -> None:
        if self._wake is None:
            self._ending(Wake.stopped)

    # -- the end -----------------------------------------------------------------------------

    def _ending(self, wake: Wake) -> None:
        """Stop the tree: also after a normal exit, what the job left behind in its group is
        stopped, as launchd (AbandonProcessGroup=false) and systemd (KillMode=control-group) do;
        a leftover holding the output pipe would otherwise keep the run going forever."""
        self._wake = wake
        assert self._tree is not None
        if self._running.paused:
            # A stopped process holds SIGTERM until it goes on: let it, to be asked.
            self._running.resume()
            resume_tree(self._tree.pid)
        if self._tree.terminate():
            self._after(self._grace, self._kill)
            self._check()
        else:
            self._kill()

    def _kill(self) -> None:
        if self._finished():
            self._conclude()
            return
        assert self._tree is not None
        self._tree.kill()
        self._after(KILL_WAIT, self._conclude)

    def _finished(self) -> bool:
        return self._exited and self._output_closed

    def _check(self) -> None:
        if self._wake is not None and self._finished():
            self._conclude()

    def _conclude(self) -> None:
        if self._ended:
            return
        if not self._output_closed:
            self._capture.note(
                "the output is still held open by a process outside the job's process group "
                "(it called setsid?); the rest of it is not captured"
            )
        self._end(self._outcome())

    def _outcome(self) -> Outcome:
        assert self._process is not None
        code = self._process.returncode
        if self._wake is Wake.stopped:
            return Outcome(RunStatus.interrupted, self._control.stop_reason, code)
        if self._wake is Wake.deadline and self._timeout is not None:
            return timed_out(self._timeout, code)
        assert code is not None  # Wake.done: it has exited
        if code == 0:
            return Outcome(RunStatus.succeeded, None, code)
        # Its code is SIGKILL's on POSIX, what TerminateProcess gave on Windows.
        if warden.stopped(self._process.pid):
            return Outcome(RunStatus.interrupted, WARDEN_STOPPED, code)
        if code < 0:
            return Outcome(
                RunStatus.failed, f"killed by signal {-code} ({_signal_name(-code)})", code
            )
        return Outcome(RunStatus.failed, f"exit code {code}", code)

    def _end(self, outcome: Outcome) -> None:
        if self._ended:
            return
        self._ended = True
        if self._timer is not None:
            self._timer.cancel()
        self._control.on_stop(None)
        if self._tree is not None:
            self._tree.close()
        self._on_end(outcome)


@functools.cache
def _devnull() -> int:
    """The jobs' stdin, opened once: ``subprocess.DEVNULL`` opens and closes it for every job."""
    return os.open(os.devnull, os.O_RDWR)


def _feed(stdin: IO[bytes], data: bytes) -> None:
    try:
        with stdin:
            stdin.write(data)
    except BrokenPipeError:
        pass  # the job exited without reading all of its input: its choice


def _working_directory(cwd: str | None, home: str) -> str:
    # cron starts jobs in the home directory; so do relative paths and a leading ~ (the job's HOME).
    if cwd is None or cwd == "~":
        return home
    if cwd.startswith(("~/", "~" + os.sep)):
        cwd = cwd[2:]
    return os.path.join(home, cwd)


def _command_line(
    action: CommandAction, env: Mapping[str, str], background: bool = False
) -> str | list[str]:
    if sys.platform == "win32":
        if action.shell is not None:
            # cmd's own quoting rule for /s /c "...": the outer quotes are stripped, nothing else.
            return f'"{env.get("COMSPEC", "cmd.exe")}" /d /s /c "{action.shell}"'
        # CreateProcess searches the app's PATH, not the job's: resolve it with the job's.
        program = shutil.which(action.argv[0], path=env.get("PATH")) or action.argv[0]
        return [program, *action.argv[1:]]
    before = priority.background_prefix() if background else []
    if action.shell is not None:
        return [*before, "/bin/sh", "-c", action.shell]
    if before:  # the program found on the job's PATH, as exec would, not the tools' own
        return [*before, _find(action.argv[0], env), *action.argv[1:]]
    return list(action.argv)


def _find(program: str, env: Mapping[str, str]) -> str:
    """``program`` on the job's PATH, or the OSError exec would raise (so a missing program is
    still "could not start", not the exit code of the tool that execs it)."""
    found = program if os.sep in program else shutil.which(program, path=env.get("PATH", ""))
    if found is None:
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    return found


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
