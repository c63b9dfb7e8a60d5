"""At most one waiting run, as the user sees it: the tray app on the real panel and dunst, a ``* * * * *`` job
"only on AC power" on a laptop running on battery (the fake UPower on the private system bus),
five dues passing on the app's clock (libfaketime), then the charger plugged in.

Rather too few than too many: at most one run of the schedule waits at any time (the latest
due; the older ones are recorded skipped as they are passed), and on plug-in exactly that one
starts, once, within the overlap policy (``skip``: never a second copy beside it). Read from
``domi-desktop runs --json``, the record the History shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.harness import Child, FakeUPower, Spawn
from tests.desktop.realdesktop import RealDunst, RealPanel
from tests.support import faketime
from tests.support.fakes import wait_for

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

APP = [sys.executable, "-m", "domi_desktop"]
WAIT = 60.0
"""Real seconds a test waits for what it checks: generous, for loaded machines."""
DUES = 5


def fake_start() -> datetime:
    """Half a minute past a minute, ten days ahead: the first due is 30 s away."""
    ahead = datetime.now(UTC) + timedelta(days=10)
    return ahead.replace(second=30, microsecond=0)


@dataclass
class Laptop:
    clock: faketime.FakeClock
    data: Path
    started: Path
    go: Path
    app: Child | None = None

    def overrides(self) -> dict[str, str]:
        """What the app and its CLI get on top of the test's environment: the data, the clock."""
        env = {**self.clock.env, "DOMI_DATA_DIR": str(self.data)}
        # The single-threaded build: with the MT one a job's fork could inherit its clock
        # mutex held by another thread (as tests/desktop/headless_app.py).
        single = self.clock.library.with_name("libfaketime.so.1")
        if single.exists():
            env["LD_PRELOAD"] = str(single)
        return env

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOMI_", "FAKETIME"))}
        return {**env, **self.overrides()}

    def cli(self, *args: str, check: bool = True) -> Any:
        done = subprocess.run(
            [*APP, *args], capture_output=True, text=True, env=self.env(), timeout=60
        )
        assert done.returncode == 0 or not check, f"{args}: {done.stderr}"
        return json.loads(done.stdout) if "--json" in args else done.stdout

    def now(self) -> datetime:
        return datetime.now(UTC) + self.clock.offset

    def at(self, when: datetime) -> None:
        self.clock.set_offset(when - datetime.now(UTC))

    def runs(self, schedule: int) -> list[dict[str, Any]]:
        """The schedule's runs, oldest first (a round trip to the app: it has served the
        events queued before it)."""
        found = self.cli("runs", "--schedule", str(schedule), "--limit", "1000", "--json")
        return list(reversed(found))

    def started_runs(self) -> list[int]:
        """The run ids the job was started as, in order (each start writes one line)."""
        if not self.started.exists():
            return []
        return [int(line.split()[1]) for line in self.started.read_text().splitlines()]

    def said(self) -> str:
        return "" if self.app is None else self.app.stderr()


@pytest.fixture
def laptop(tmp_path: Path, spawn: Spawn, fake_upower: FakeUPower) -> Iterator[Laptop]:
    clock = faketime.fake_clock(tmp_path)
    made = Laptop(clock, tmp_path / "data", tmp_path / "started.txt", tmp_path / "go")
    made.data.mkdir()
    made.at(fake_start())
    fake_upower.update(on_battery=True, percentage=40)  # unplugged before the app looks
    made.app = spawn(APP, env=made.overrides())
    wait_for(
        lambda: made.cli("status", "--json", check=False).get("running"),
        WAIT,
        "the app on its socket",
    )
    try:
        yield made
    finally:
        made.go.touch()  # a job still held lets go, so the app's quit is not held by it


def due_of(run: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(run["due"])


def statuses(runs: list[dict[str, Any]]) -> list[str]:
    return [run["status"] for run in runs]


def test_five_dues_on_battery_then_the_charger_one_run_four_skipped_never_two_at_once(
    laptop: Laptop, fake_upower: FakeUPower, real_panel: RealPanel, real_dunst: RealDunst
) -> None:
    (item,) = real_panel.wait_for_items(1, timeout=WAIT)  # the tray app is in the real panel
    assert real_panel.item_property(item, "Status") == "Active"
    job = (
        f'echo "start $DOMI_RUN_ID" >> {laptop.started}; '
        f"while [ ! -e {laptop.go} ]; do sleep 0.05; done"
    )
    added = laptop.cli(
        "schedule", "add", "Sync photos", "--cron", "* * * * *", "--tz", "UTC",
        "--on-ac-power", "--wait-at-most", "180", "--on-deadline", "skip", "--overlap", "skip",
        "--shell", "--json", "--", job,
    )  # fmt: skip
    schedule = int(added["id"])
    first = laptop.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
    dues = [first + timedelta(minutes=k) for k in range(DUES)]

    for passed, due in enumerate(dues, start=1):
        laptop.at(due - timedelta(seconds=1))  # real time carries the clock over the due
        # This due's row waits, every older one is skipped: one waiting row, never a pile
        # (a pile never settles into this, and the wait runs out).
        pile_free = ["skipped"] * (passed - 1) + ["waiting"]

        def settled(due: datetime = due, expected: list[str] = pile_free) -> bool:
            runs = laptop.runs(schedule)
            return bool(runs) and due_of(runs[-1]) == due and statuses(runs) == expected

        try:
            wait_for(settled, WAIT, f"one waiting row, the due {due:%H:%M}")
        except AssertionError:
            raise AssertionError(
                f"after {passed} due(s) on battery: {statuses(laptop.runs(schedule))}, "
                f"wanted {pile_free}"
            ) from None
        runs = laptop.runs(schedule)
        assert [due_of(run) for run in runs] == dues[:passed]  # one row per due
        assert runs[-1]["reason"] == "waiting for the charger"
        assert laptop.started_runs() == []

    unplugged_for = laptop.now() - dues[-1]
    plugged = fake_upower.update(on_battery=False)
    wait_for(laptop.started_runs, WAIT, "the waiting run to start on the charger")
    runs = laptop.runs(schedule)
    mine = [run for run in runs if due_of(run) in dues]
    assert [due_of(run) for run in mine] == dues  # one row per due, no more
    assert [run["status"] for run in mine] == ["skipped"] * (DUES - 1) + ["running"], mine
    for run in mine[:-1]:
        assert "when a later due came" in run["reason"], run
    ran = mine[-1]
    assert laptop.started_runs() == [ran["id"]]  # the latest due's run, started once

    # The reason is true to the second: the wait of this run, from its due to its start.
    waited = re.fullmatch(r"started after waiting (\d+) seconds? for the charger", ran["reason"])
    assert waited is not None, ran["reason"]
    started_at = datetime.fromisoformat(ran["started_at"])
    assert unplugged_for.total_seconds() - 1 <= int(waited[1])
    assert int(waited[1]) <= (started_at - dues[-1]).total_seconds() + 1

    laptop.go.touch()

    def ended() -> bool:
        return laptop.runs(schedule)[DUES - 1]["status"] not in ("running", "waiting")

    wait_for(ended, WAIT, "the run to end")
    final = [run for run in laptop.runs(schedule) if due_of(run) in dues]
    assert [run["status"] for run in final] == ["skipped"] * (DUES - 1) + ["succeeded"]
    assert [run["id"] for run in final] == [run["id"] for run in mine]
    # Whatever came after (the next dues, now on mains), never a second copy of those five.
    assert [i for i in laptop.started_runs() if i in {run["id"] for run in mine}] == [ran["id"]]
    print(f"plug-in -> start of the waiting run: sent at {plugged:.2f} (monotonic)")
    assert "Traceback" not in laptop.said()
