"""The app a user clicks, started as the desktop starts it: its log's first wake, ``status``, ``quit``.

    python packaging/windowed_test.py APP

APP is what a user starts:

- Windows  %LOCALAPPDATA%\\Programs\\domi-desktop\\domi-desktop.exe (installed): the windowed
           build, which has no console and no stderr, so its log file is all it says
- macOS    /Volumes/.../domi-desktop.app (the mounted .dmg), opened with ``open -n -a`` as Finder
           or the Dock would, so through LaunchServices and with no environment of ours

packaging/smoke_test.py drives the console program with Qt offscreen; this proves that the
windowed app starts on the desktop's own Qt platform (no ``QT_QPA_PLATFORM``): its tray app reaches
its first wake (the log's "wake (start)"), ``status`` through the console program finds it with
``gui`` true, the OS's resume message posted to it as smoke_test.py posts it to ``--headless``
is a resume wake (``last_wake.reason``), and ``quit`` ends it cleanly ("stopped" in its log, no
traceback; on Windows, where this script starts the process itself, exit 0). Its data folder is a
temp dir (``--data-dir``). Exit 0 when every check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smoke_test import TEST_WAKE_SIGNAL, post_wm_powerbroadcast, post_workspace_wake

FIRST_WAKE = "wake (start)"
LOG_NAME = "domi-desktop.log"


class WindowedError(AssertionError):
    """A check failed; the message says which and shows what the app said."""


@dataclass(frozen=True)
class Launch:
    """How the app is started (``start`` gets ``--data-dir DIR`` appended) and its console program."""

    start: tuple[str, ...]
    cli: tuple[str, ...]
    owns_process: bool
    """Whether ``start`` is the app's own process (its exit code is the app's), not a launcher."""
    post_wake: Callable[[int], str]
    """Posts the OS's resume message to the app's process (smoke_test.py's, for this OS)."""


def launch_for(app: Path) -> Launch:
    if sys.platform == "darwin":
        # open -n: a new instance even if LaunchServices remembers one; --env: LaunchServices
        # passes none of ours; --args: the rest is argv.
        start = ("open", "-n", "-a", str(app), "--env", f"{TEST_WAKE_SIGNAL}=1", "--args")
        cli = (str(app / "Contents" / "MacOS" / "domi-desktop"),)
        return Launch(start, cli, False, post_workspace_wake)
    if sys.platform == "win32":
        cli = (str(app.with_name("domi-desktop-cli.exe")),)
        return Launch((str(app),), cli, True, post_wm_powerbroadcast)
    raise SystemExit("windowed_test: Windows and macOS only (tests/packaging has Linux's check)")


def _wait(condition: Callable[[], bool], timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise WindowedError(f"not within {timeout:.0f} s: {what}\nthe app's log:\n{_text(log)}")
        time.sleep(0.1)


def _text(log: Path) -> str:
    return log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "(no log)"


def _status(launch: Launch, env: dict[str, str]) -> dict[str, Any] | None:
    """The running app's status; None when none answers (the console program exits 3 then)."""
    done = subprocess.run(
        [*launch.cli, "status", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return None
    state: dict[str, Any] = json.loads(done.stdout)
    return state


def check_windowed(
    launch: Launch, data_dir: Path, env: dict[str, str], timeout: float = 60
) -> dict[str, object]:
    """Start the app, wait for its first wake, ask its status, quit it; the seconds each took."""
    env = {name: value for name, value in env.items() if name != "QT_QPA_PLATFORM"}
    env["DOMI_DATA_DIR"] = str(data_dir)  # the console program's; the app gets --data-dir
    env[TEST_WAKE_SIGNAL] = "1"
    log = data_dir / LOG_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    process = subprocess.Popen(
        [*launch.start, "--data-dir", str(data_dir)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:

        def first_wake() -> bool:
            if launch.owns_process and process.poll() is not None:
                raise WindowedError(f"the app exited {process.returncode}:\n{_text(log)}")
            return FIRST_WAKE in _text(log)

        _wait(first_wake, timeout, f"{FIRST_WAKE!r} in {log}", log)
        first_wake_s = time.monotonic() - started
        state = _status(launch, env)
        if not state or state.get("running") is not True or state.get("gui") is not True:
            raise WindowedError(f"status: expected the running tray app, got {state}")
        if launch.owns_process and state.get("pid") != process.pid:
            raise WindowedError(f"status: answered by pid {state.get('pid')}, not {process.pid}")
        how = launch.post_wake(state["pid"])

        def resumed() -> bool:
            last = (_status(launch, env) or {}).get("last_wake") or {}
            return bool(last.get("reason") == "resume")

        _wait(resumed, timeout, f"{how}, then status's last_wake.reason 'resume'", log)
        stopping = time.monotonic()
        done = subprocess.run(
            [*launch.cli, "quit"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise WindowedError(f"quit: exit {done.returncode}\n{done.stdout}{done.stderr}")
        _wait(lambda: _status(launch, env) is None, timeout, "the app gone after quit", log)
        _wait(lambda: "stopped" in _text(log), timeout, "'stopped' in its log", log)
        if launch.owns_process:
            code = process.wait(timeout=timeout)
            if code != 0:
                raise WindowedError(f"the app exited {code} after quit:\n{_text(log)}")
        if "Traceback" in _text(log):
            raise WindowedError(f"a traceback in the app's log:\n{_text(log)}")
        return {
            "pid": state["pid"],
            "wake": how,
            "first_wake_s": round(first_wake_s, 2),
            "stop_s": round(time.monotonic() - stopping, 2),
        }
    finally:
        if launch.owns_process and process.poll() is None:
            process.kill()
        process.wait(timeout=timeout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app", type=Path, help="the windowed .exe, or the .app")
    args = parser.parse_args(argv)
    launch = launch_for(args.app.resolve())
    with tempfile.TemporaryDirectory(prefix="domi-windowed-") as temp:
        try:
            results = check_windowed(launch, Path(temp) / "data", dict(os.environ))
        except (WindowedError, subprocess.SubprocessError, OSError) as error:
            print(f"windowed_test: FAILED {error}", file=sys.stderr)
            return 1
    print(f"windowed_test: all checks passed {json.dumps(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
