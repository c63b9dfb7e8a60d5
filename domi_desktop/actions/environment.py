"""The environment a command runs in: deliberate, never the app's own.

The seed's lesson (cron): a job must not depend on whatever the interactive shell or the desktop
session happened to export. Every job starts from the same small base; the action's ``env`` comes
next (so a user can override ``PATH``), its secrets last. Values are taken literally, as cron and
systemd's ``Environment=`` do: ``$PATH`` in a value is not expanded.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Mapping

from domi_desktop.model import CommandAction

POSIX_PATH = "/usr/local/bin:/usr/bin:/bin"
MACOS_PATH = "/opt/homebrew/bin:" + POSIX_PATH
"""Homebrew's prefix on Apple silicon; on Intel Macs it is /usr/local/bin, already there."""

# Where Windows and its programs are, not shell customisations: many programs fail without them.
_WINDOWS_INHERITED = (
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "USERNAME",
    "USERDOMAIN",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
)


if sys.platform == "win32":

    def base_environment() -> dict[str, str]:
        """The variables every job gets before its own."""
        env = {k: os.environ[k] for k in _WINDOWS_INHERITED if k in os.environ}
        root = env.get("SYSTEMROOT", r"C:\Windows")
        system32 = rf"{root}\System32"
        env["PATH"] = ";".join(
            [system32, root, rf"{system32}\Wbem", rf"{system32}\WindowsPowerShell\v1.0"]
        )
        return env

else:
    import pwd

    def base_environment() -> dict[str, str]:
        """The variables every job gets before its own."""
        account = _account(os.getuid())
        if account is None:  # a uid with no passwd entry (some containers)
            user, home = os.environ.get("USER", str(os.getuid())), "/"
        else:
            user, home = account
        env = {
            "PATH": MACOS_PATH if sys.platform == "darwin" else POSIX_PATH,
            # The session's HOME when there is one: it is where the user's files are.
            "HOME": os.environ.get("HOME") or home,
            "USER": user,
            "LOGNAME": user,
            "LANG": os.environ.get("LANG") or "C.UTF-8",
            "SHELL": "/bin/sh",
        }
        if "TMPDIR" in os.environ:
            env["TMPDIR"] = os.environ["TMPDIR"]
        return env

    @functools.lru_cache(maxsize=1)
    def _account(uid: int) -> tuple[str, str] | None:
        """The user's name and home directory, looked up once: a lookup reads /etc/passwd (or
        asks NSS) each time, and the entry of a user does not change while they are logged in."""
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:
            return None
        return entry.pw_name, entry.pw_dir


def job_environment(
    action: CommandAction, secrets: Mapping[str, str], tags: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The base, then the action's ``env``, then its secrets (variable → value), then the run's
    ``tags`` (``identity.job_tags``), last so that a job cannot lose them."""
    env = base_environment()
    _update(env, action.env)
    _update(env, secrets.items())
    _update(env, (tags or {}).items())
    return env


def _update(env: dict[str, str], pairs: Iterable[tuple[str, str]]) -> None:
    for name, value in pairs:
        if sys.platform == "win32":
            # Names are case-insensitive there: "Path" must replace "PATH", not sit beside it.
            for key in [k for k in env if k.upper() == name.upper()]:
                del env[key]
        env[name] = value
