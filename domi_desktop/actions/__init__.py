"""Run a schedule's action: a command or an HTTP request, off the GUI thread, secrets masked.

The app and the CLI start a schedule's action with ``ActionRunner.start(request, on_finished,
secrets=store)`` (or ``run(request, secrets=store)``, which waits): secrets are read on a thread
of the run's own and a missing one fails the run with reason ``secret unavailable: ...``. Command
jobs are started and looked after by one thread for them all (``supervisor``).
"""

from __future__ import annotations

from domi_desktop.actions.capture import LogLimits
from domi_desktop.actions.environment import base_environment, job_environment
from domi_desktop.actions.model import (
    TAIL_BYTES,
    ActionRequest,
    ActionResult,
    check_action,
    resolve_secrets,
)
from domi_desktop.actions.runner import KILL_GRACE, ActionRunner, RunningAction

__all__ = [
    "KILL_GRACE",
    "TAIL_BYTES",
    "ActionRequest",
    "ActionResult",
    "ActionRunner",
    "LogLimits",
    "RunningAction",
    "base_environment",
    "check_action",
    "job_environment",
    "resolve_secrets",
]
