"""The headless app run for real under libfaketime, on this test's private system bus: its CLI,
its clock, its job's output, its log (for the desktop tests of conditions and session triggers)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support import faketime


@dataclass
class App:
    """One headless app, its CLI and its clock."""

    root: Path
    clock: faketime.FakeClock
    fake_start: datetime
    process: subprocess.Popen[bytes] | None = None
    lines: Path = field(init=False)

    def __post_init__(self) -> None:
        self.lines = self.root / "ran.txt"
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        (self.root / "run").mkdir(mode=0o700, exist_ok=True)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOMI_", "FAKETIME"))}
        env.update(
            self.clock.env,
            DOMI_DATA_DIR=str(self.root / "data"),
            XDG_RUNTIME_DIR=str(self.root / "run"),
            QT_QPA_PLATFORM="offscreen",
            PYTHONFAULTHANDLER="1",
        )
        # The single-threaded build: with the MT one a job's fork could inherit its clock
        # mutex held by another thread (tests/test_fleet.py).
        single = self.clock.library.with_name("libfaketime.so.1")
        if single.exists():
            env["LD_PRELOAD"] = str(single)
        return env

    def cli(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "domi_desktop", *args],
            capture_output=True, text=True, env=self.env(), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout

    def at(self, when: datetime) -> None:
        """The app's clock set to ``when`` (it moves on from there at the real pace)."""
        self.clock.set_offset(when - datetime.now(UTC))

    def start(self) -> None:
        with (self.root / "stderr").open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "domi_desktop", "--headless"],
                env=self.env(), stdout=subprocess.DEVNULL, stderr=log,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = subprocess.run(
                [sys.executable, "-m", "domi_desktop", "status", "--json"],
                capture_output=True, text=True, env=self.env(), timeout=60,
            )  # fmt: skip
            if done.returncode == 0:
                return
            assert self.process.poll() is None, self.log()
            time.sleep(0.2)

    def poke(self) -> None:
        """A question over the socket: the app's loop wakes and sees how late its clock is."""
        self.cli("status", "--json")

    def ran(self) -> list[str]:
        return self.lines.read_text().splitlines() if self.lines.exists() else []

    def wait_ran(self, count: int, timeout: float = 120.0) -> float:
        """Waits for the job's ``count``-th line; returns the monotonic time it was seen."""
        deadline = time.monotonic() + timeout
        while len(self.ran()) < count:
            assert time.monotonic() < deadline, f"no run {count} within {timeout} s\n{self.log()}"
            assert self.process is not None and self.process.poll() is None, self.log()
            time.sleep(0.02)
        return time.monotonic()

    def runs(self, schedule: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.cli(
            "runs", "--schedule", str(schedule), "--limit", "1000", "--json"
        )
        return found

    def log(self) -> str:
        parts = [self.root / "stderr", self.root / "data" / "domi-desktop.log"]
        return "\n".join(p.read_text(errors="replace")[-4000:] for p in parts if p.exists())

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        subprocess.run(
            [sys.executable, "-m", "domi_desktop", "quit"],
            capture_output=True, env=self.env(), timeout=60, check=False,
        )  # fmt: skip
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        """Whatever a test left: a stopped app is continued, then asked to quit (killed if it
        will not), and its log printed (pytest shows it when the test failed)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
        self.stop()
        print(self.log())


def faked_app(tmp_path: Path) -> App:
    """An app whose clock stands two hours before a midnight ten days ahead."""
    midnight = (datetime.now(UTC) + timedelta(days=10)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    made = App(tmp_path, faketime.fake_clock(tmp_path), midnight - timedelta(hours=2))
    made.at(made.fake_start)
    return made
