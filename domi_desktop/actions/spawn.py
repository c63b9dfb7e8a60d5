"""How a job's process is started on each OS: room for many jobs' descriptors in this process
and the job's own limit given back, and the job ended with the app (Linux's ``--pdeathsig``)."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping

_MAX_FILES = 65536
"""The most open files this process asks for room for (each running job holds three)."""
_MACOS_OPEN_MAX = 10240
"""macOS refuses a soft limit above its OPEN_MAX, whatever the hard limit says."""


if sys.platform != "win32":
    import resource

    @functools.cache
    def room_for_jobs() -> tuple[int, int] | None:
        """Raise this process's soft limit on open files, once: each running job holds three
        descriptors here (its output pipe, its pidfd, its log), and a desktop session's usual
        soft limit of 1,024 would refuse the 340th job of a wake. Returns the limits as they
        were, for the jobs (None: nothing changed)."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        ceiling = _MAX_FILES if hard == resource.RLIM_INFINITY else min(hard, _MAX_FILES)
        if soft == resource.RLIM_INFINITY or soft >= ceiling:
            return None
        for wanted in sorted({ceiling, min(ceiling, _MACOS_OPEN_MAX)}, reverse=True):
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            except (ValueError, OSError):
                continue
            return soft, hard
        return None

else:

    def room_for_jobs() -> tuple[int, int] | None:
        """Windows limits handles per process far above what jobs need."""
        return None


if sys.platform == "linux":

    def give_back_file_limit(pid: int, limits: tuple[int, int] | None) -> None:
        """The job runs with the limit this process was given, as it would under cron: a raised
        one would break a program that select()s its descriptors. (Set at once after the exec;
        macOS has no way to set another process's limit, and its jobs keep the raised one.)"""
        if limits is not None:
            with contextlib.suppress(OSError):  # it has ended already
                resource.prlimit(pid, resource.RLIMIT_NOFILE, limits)

    def die_with_app(command: str | list[str], env: Mapping[str, str], cwd: str) -> str | list[str]:
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
        refused = False
        for directory in [""] if os.sep in program else search.split(os.pathsep):
            candidate = os.path.join(cwd, directory, program)
            try:
                mode = os.stat(candidate).st_mode
            except (OSError, ValueError):
                continue  # not there (or a name no file can have)
            if stat.S_ISREG(mode) and os.access(candidate, os.X_OK):
                return candidate
            refused = True
        code = errno.EACCES if refused else errno.ENOENT
        raise OSError(code, os.strerror(code), program)

else:

    def give_back_file_limit(pid: int, limits: tuple[int, int] | None) -> None:
        """Only Linux can set another process's limits."""

    def die_with_app(command: str | list[str], env: Mapping[str, str], cwd: str) -> str | list[str]:
        """Windows: the Job Object does this. macOS has no such request of its own."""
        return command
