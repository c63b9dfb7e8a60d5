"""Smoke-test a built bundle on any OS: ``--version``, ``preview``, ``--headless`` start and stop.

    python packaging/smoke_test.py EXECUTABLE

EXECUTABLE is the bundle's command-line program:

- Linux    dist/domi-desktop/domi-desktop
- macOS    dist/domi-desktop.app/Contents/MacOS/domi-desktop
- Windows  dist/domi-desktop/domi-desktop-cli.exe (the console one)

Standard library only, so CI can run it with any Python. On Linux and macOS each command runs
with an empty environment (as ``env -i``), which proves the bundle needs nothing from the shell;
Windows cannot start a process without its system variables, so there it inherits them. The zone
check runs with ``PYTHONTZPATH`` empty: zoneinfo then ignores the OS database, so the zone must
come from the tzdata inside the bundle. ``--headless`` is stopped with SIGTERM, or on Windows (no
SIGTERM there) with ``domi-desktop quit`` over the app's socket; both must end in exit 0.
Exit 0 when every check passed; the timings are printed (``--json`` for a machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IS_WINDOWS = sys.platform == "win32"

PREVIEW = ["preview", "0 9 * * 1-5", "--tz", "Asia/Shanghai", "-n", "2"]
PREVIEW += ["--after", "2024-03-09T12:00:00+08:00", "--json"]
PREVIEW_NEXT = ["2024-03-11T09:00:00+08:00", "2024-03-12T09:00:00+08:00"]
FIRST_WAKE = "wake (start)"


class SmokeError(AssertionError):
    """A check failed; the message says which and shows the output."""


def expected_version() -> str:
    text = (ROOT / "domi_desktop" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if match is None:
        raise SmokeError("no __version__ in domi_desktop/__init__.py")
    return match.group(1)


def base_env(**extra: str) -> dict[str, str]:
    """An empty environment (``env -i``) plus ``extra``; on Windows the inherited one plus ``extra``."""
    env = dict(os.environ) if IS_WINDOWS else {}
    env.update(extra)
    return env


def run(
    exe: Path, *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _show(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\nstdout: {done.stdout.strip()}\nstderr: {done.stderr.strip()}"


def check_version(exe: Path, env: dict[str, str]) -> str:
    done = run(exe, "--version", env=env)
    want = f"domi-desktop {expected_version()}"
    if done.returncode != 0 or done.stdout.strip() != want:
        raise SmokeError(f"--version: expected {want!r}\n{_show(done)}")
    return done.stdout.strip()


def check_preview(exe: Path, env: dict[str, str]) -> None:
    """Asia/Shanghai from the bundled tzdata alone: PYTHONTZPATH empty hides the OS database."""
    done = run(exe, *PREVIEW, env={**env, "PYTHONTZPATH": ""})
    try:
        fires = json.loads(done.stdout)["next"]
    except (ValueError, KeyError, TypeError):
        fires = None
    if done.returncode != 0 or fires != PREVIEW_NEXT:
        raise SmokeError(f"preview: expected the fires {PREVIEW_NEXT}\n{_show(done)}")


def check_secret_list(exe: Path, env: dict[str, str]) -> str:
    """The OS keyring answers, or one clear line says why not (no keyring, locked...): no traceback."""
    done = run(exe, "secret", "list", env=env)
    clear = done.returncode == 0 or (
        done.returncode == 2 and done.stderr.startswith("domi-desktop: ")
    )
    if not clear or "Traceback" in done.stderr:
        raise SmokeError(f"secret list: expected the names or one clear message\n{_show(done)}")
    if done.returncode == 0:
        return "the OS keyring answered"
    message = done.stderr.strip().removeprefix("domi-desktop: ")
    return message if len(message) <= 70 else message[:67] + "..."


def check_headless(exe: Path, env: dict[str, str], data_dir: Path) -> dict[str, float]:
    """Start ``--headless``, wait for its first wake, stop it; the seconds each step took."""
    env = {**env, "DOMI_DATA_DIR": str(data_dir)}
    log = data_dir / "headless.stderr"
    data_dir.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(
            [str(exe), "--headless"], env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
        try:
            first_wake = _wait_for_log(process, log, FIRST_WAKE, started, timeout=30)
            stopping = time.perf_counter()
            if IS_WINDOWS:
                done = run(exe, "quit", env=env)
                if done.returncode != 0:
                    raise SmokeError(f"quit: the headless app did not take it\n{_show(done)}")
            else:
                process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=20)
            stopped = time.perf_counter() - stopping
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    text = log.read_text(encoding="utf-8", errors="replace")
    if code != 0 or "stopped" not in text or "Traceback" in text:
        raise SmokeError(f"--headless: expected exit 0 and 'stopped', got exit {code}\n{text}")
    return {"first_wake_s": first_wake, "stop_s": stopped}


def _wait_for_log(
    process: subprocess.Popen[bytes], log: Path, text: str, started: float, timeout: float
) -> float:
    deadline = started + timeout
    while time.perf_counter() < deadline:
        if text in log.read_text(encoding="utf-8", errors="replace"):
            return time.perf_counter() - started
        if process.poll() is not None:
            raise SmokeError(f"--headless exited {process.returncode} before {text!r}:\n"
                             + log.read_text(encoding="utf-8", errors="replace"))  # fmt: skip
        time.sleep(0.005)
    raise SmokeError(f"--headless: no {text!r} within {timeout:.0f} s:\n{log.read_text()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("executable", type=Path, help="the bundle's command-line program")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)
    exe = args.executable.resolve()
    if not exe.is_file():
        print(f"smoke_test: no executable at {exe}", file=sys.stderr)
        return 1
    results: dict[str, object] = {"executable": str(exe)}
    with tempfile.TemporaryDirectory(prefix="domi-smoke-") as temp:
        home = Path(temp) / "home"
        home.mkdir()
        # HOME (and on Windows the profile folders) in the temp dir: no trace left in the real ones.
        env = base_env(HOME=str(home), QT_QPA_PLATFORM="offscreen")
        if IS_WINDOWS:
            env.update(APPDATA=str(home / "Roaming"), LOCALAPPDATA=str(home / "Local"))
        try:
            results["version"] = check_version(exe, env)
            check_preview(exe, env)
            results["preview"] = "Asia/Shanghai from the bundled tzdata"
            results["secret_list"] = check_secret_list(exe, env)
            results["headless"] = check_headless(exe, env, Path(temp) / "data")
        except SmokeError as error:
            print(f"smoke_test: FAILED {error}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(results))
    else:
        for key, value in results.items():
            print(f"{key:12} {value}")
        print("smoke_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
