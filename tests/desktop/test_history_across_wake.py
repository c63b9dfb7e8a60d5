"""A wake in an open History window, as the user sees it: one window left open (opened from the
tray's menu in the real panel) while the laptop sleeps five hours shows every skipped row of that
wake as soon as the wake is recorded, without being closed and opened again, row for row as the
database has them.

The app is the real tray app under libfaketime, woken by the fake logind's PrepareForSleep on the
private system bus; history_probe.py runs it and prints what the window's table shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.harness import Child, FakeLogind, Spawn
from tests.desktop.realdesktop import RealDunst, RealPanel
from tests.support import faketime
from tests.support.fakes import wait_for

pytestmark = [
    pytest.mark.gui,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

APP = [sys.executable, "-m", "domi_desktop"]
PROBE = Path(__file__).with_name("history_probe.py")
WAIT = 60.0
"""Real seconds a test waits for what it checks: generous, for loaded machines."""
ASLEEP = timedelta(hours=5)
SCHEDULES = {
    # name: (cron, options): catch-up latest gives a late run and its skipped dues; catch-up
    # skip records every due of the sleep skipped, its fire too.
    "Hourly sync": ("0 * * * *", ()),
    "Quarter-hour check": ("*/15 * * * *", ("--catch-up", "skip")),
    "Half-hour mail": ("*/30 * * * *", ()),
}


@dataclass
class Laptop:
    clock: faketime.FakeClock
    data: Path
    app: Child | None = None

    def overrides(self) -> dict[str, str]:
        env = {**self.clock.env, "DOMI_DATA_DIR": str(self.data)}
        # The single-threaded build: with the MT one a job's fork could inherit its clock
        # mutex held by another thread (as tests/desktop/headless_app.py).
        single = self.clock.library.with_name("libfaketime.so.1")
        if single.exists():
            env["LD_PRELOAD"] = str(single)
        return env

    def cli(self, *args: str, check: bool = True) -> Any:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOMI_", "FAKETIME"))}
        done = subprocess.run(
            [*APP, *args], capture_output=True, text=True, env={**env, **self.overrides()},
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 0 or not check, f"{args}: {done.stderr}"
        return json.loads(done.stdout) if "--json" in args else done.stdout

    def now(self) -> datetime:
        return datetime.now(UTC) + self.clock.offset

    def at(self, when: datetime) -> None:
        self.clock.set_offset(when - datetime.now(UTC))

    def runs(self) -> list[dict[str, Any]]:
        """Every run in the database, newest first (as the History lists them)."""
        found: list[dict[str, Any]] = self.cli("runs", "--limit", "1000", "--json")
        return found

    def shown(self) -> dict[str, Any] | None:
        """What the open History window showed last (None: no window shown yet)."""
        assert self.app is not None
        seen = [e for e in self.app.events() if e.get("event") == "history"]
        return seen[-1] if seen else None

    def shown_ids(self) -> list[int]:
        shown = self.shown()
        return [] if shown is None else [row["id"] for row in shown["rows"]]


@pytest.fixture
def laptop(tmp_path: Path, spawn: Spawn, fake_logind: FakeLogind) -> Iterator[Laptop]:
    clock = faketime.fake_clock(tmp_path)
    made = Laptop(clock, tmp_path / "data")
    made.data.mkdir()
    ahead = datetime.now(UTC) + timedelta(days=10)
    made.at(ahead.replace(minute=50, second=0, microsecond=0))
    made.app = spawn([sys.executable, str(PROBE)], env=made.overrides())
    wait_for(
        lambda: made.cli("status", "--json", check=False).get("running"), WAIT, "the app running"
    )
    yield made


def test_an_open_history_shows_every_skipped_row_of_a_wake_live(
    laptop: Laptop, fake_logind: FakeLogind, real_panel: RealPanel, real_dunst: RealDunst
) -> None:
    (item,) = real_panel.wait_for_items(1, timeout=WAIT)
    # As the user opens it from the tray (before the schedules exist: each schedule's submenu
    # has a History… of its own, which opens on that schedule alone).
    real_panel.click_menu_entry(item, "History…")
    wait_for(lambda: laptop.shown() is not None, WAIT, "the History window shown")
    assert laptop.shown_ids() == []
    window = laptop.shown()["window"]  # type: ignore[index]
    for name, (cron, options) in SCHEDULES.items():
        laptop.cli("schedule", "add", name, "--cron", cron, "--tz", "UTC", *options, "--", "true")

    # Awake at the top of the hour: the window takes in each run as it comes.
    top = laptop.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    laptop.at(top - timedelta(seconds=1))

    def finished(runs: list[dict[str, Any]]) -> bool:
        return all(run["status"] not in ("running", "waiting") for run in runs)

    wait_for(lambda: len(runs := laptop.runs()) == 3 and finished(runs), WAIT, "the 3 runs")
    awake = laptop.runs()
    wait_for(lambda: laptop.shown_ids() == [r["id"] for r in awake], WAIT, "the awake runs shown")

    # Five hours asleep; on resume the wake records its skipped dues and the late runs.
    fake_logind.prepare_for_sleep(True)
    laptop.at(top + ASLEEP + timedelta(minutes=7))
    fake_logind.prepare_for_sleep(False)
    woke = max(run["id"] for run in awake)

    def wake_recorded() -> bool:
        runs = [run for run in laptop.runs() if run["id"] > woke]
        ran = [run for run in runs if run["status"] != "skipped"]
        return len(ran) == 2 and finished(runs)  # the hourly and the half-hourly late runs

    wait_for(wake_recorded, WAIT, "the wake recorded")
    everything = laptop.runs()
    skipped = [run for run in everything if run["id"] > woke and run["status"] == "skipped"]
    # 4 hourly + 9 half-hourly dues before the latest of each; the quarter-hourly: all 20.
    assert len(skipped) == 4 + 9 + 20, [(run["schedule_id"], run["due"]) for run in skipped]

    expected = [run["id"] for run in everything]

    def all_shown() -> bool:
        shown = laptop.shown()
        # The count follows the rows within a second (counting reads every run).
        return shown is not None and (
            laptop.shown_ids() == expected and shown["count"] == f"{len(expected)} runs"
        )

    try:
        wait_for(all_shown, WAIT, "every run of the wake in the open window")
    except AssertionError:
        missing = sorted(set(expected) - set(laptop.shown_ids()))
        raise AssertionError(
            f"the open History lacks {len(missing)} of the wake's rows: {missing}"
        ) from None
    shown = laptop.shown()
    assert shown is not None
    assert shown["window"] == window  # the same window, left open throughout
    assert laptop.app is not None
    opened = [line for line in laptop.app.stderr().splitlines() if "history window opened" in line]
    assert len(opened) == 1 and opened[0].endswith("history window opened"), opened
    rows = {row["id"]: row["texts"] for row in shown["rows"]}
    for run in skipped:
        texts = rows[run["id"]]
        assert "skipped" in texts, texts
        assert "missed while asleep" in texts, texts
