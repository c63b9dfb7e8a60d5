"""The benches that start the tray app need a display and a session bus: where there are none, they
run again under ``dbus-run-session -- xvfb-run`` (a throw-away HOME, as the desktop tests have)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile


def rerun_under_a_desktop() -> int | None:
    """The exit code of this script run again under a session bus and Xvfb; None when it runs
    under them already (then it goes on)."""
    if os.environ.get("DISPLAY") and os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return None
    wrapped = ["dbus-run-session", "--", "xvfb-run", "-a", "-s", "-screen 0 1280x800x24",
               sys.executable, *sys.argv]  # fmt: skip
    return subprocess.call(wrapped, env={**os.environ, "HOME": tempfile.mkdtemp()})
