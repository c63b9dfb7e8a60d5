"""The headless app always stops on SIGTERM (a logout, a shutdown) with logind on the system bus,
as on every Linux desktop: after a sleep and without one, a running job recorded ``interrupted``.

Before the engine had a thread of its own and talked to logind over jeepney, the app hung for good
here: a blocking QtDBus disconnect in the main thread while QtDBus's thread waited for the
interpreter lock."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.desktop.harness import FakeLogind
from tests.desktop.headless_app import App
from tests.support import faketime

pytestmark = pytest.mark.gui

TRIES = 20
LONG_JOB = "import time; time.sleep(300)"


def _running(app: App, schedule: int) -> tuple[int, subprocess.Popen[bytes]]:
    """Starts a manual run of ``schedule``: its id once its job runs, and the CLI that asked
    (it waits for the run's end; the caller ends it)."""
    asker = subprocess.Popen(
        [sys.executable, "-m", "domi_desktop", "run-now", str(schedule)],
        env=app.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        runs = [r for r in app.runs(schedule) if r["status"] == "running"]
        if runs:
            return int(runs[0]["id"]), asker
        assert time.monotonic() < deadline, app.log()
        time.sleep(0.05)


@pytest.mark.parametrize("slept", [False, True], ids=["awake", "after-a-sleep"])
def test_sigterm_with_logind_on_the_system_bus_always_stops_the_app(
    fake_logind: FakeLogind, tmp_path: Path, slept: bool
) -> None:
    took: list[float] = []
    for attempt in range(TRIES):
        root = tmp_path / f"try-{attempt}"
        root.mkdir()
        app = App(root, faketime.fake_clock(root), datetime.now(UTC))
        asker: subprocess.Popen[bytes] | None = None
        try:
            app.start()
            schedule = int(
                app.cli(
                    "schedule", "add", "long", "--cron", "0 3 * * *", "--", sys.executable,
                    "-c", LONG_JOB,
                ).split()[0]
            )  # fmt: skip
            run_id, asker = _running(app, schedule)
            if slept:
                fake_logind.prepare_for_sleep(True)
                fake_logind.prepare_for_sleep(False)
                app.poke()  # the wake has been heard and handled
            assert app.process is not None
            app.process.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            try:
                app.process.wait(60)
            except subprocess.TimeoutExpired:
                pytest.fail(f"try {attempt}: the app still runs 60 s after SIGTERM\n{app.log()}")
            took.append(time.monotonic() - sent)
            assert app.process.returncode == 0, app.log()
            (run,) = [r for r in app.runs(schedule) if r["id"] == run_id]
            assert run["status"] == "interrupted", run
            assert "Traceback" not in app.log()
        finally:
            if asker is not None:
                asker.kill()
                asker.wait()
            app.close()
    # A figure for the log, not a bound (the machine may be loaded): bench/ has the figures.
    print(f"SIGTERM to exit over {TRIES} tries: longest {max(took):.2f} s")
