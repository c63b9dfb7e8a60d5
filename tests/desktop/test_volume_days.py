"""A job that waits for its disk, end to end: the headless app on the private system bus with the
fake UDisks2 (and the fake logind), its clock moved by libfaketime, running "once a day, when the
disk Backup is plugged in".

The figures (a run within 5 s of the first mount of its day, within 5 s of the
resume) are measured and printed; they are asserted only with a generous margin (a loaded 2-CPU
machine), what is asserted exactly is the count of runs.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.desktop.harness import FakeLogind
from tests.desktop.headless_app import App
from tests.desktop.udisks import FakeUDisks2
from tests.support import faketime

pytestmark = [
    pytest.mark.gui,
    pytest.mark.slow,
    pytest.mark.linux_only,
    pytest.mark.skipif(faketime.find_library() is None, reason="needs libfaketime"),
]

MARGIN = 30.0
"""Real seconds a run may take to follow its mount on a loaded machine (measured: well under 5)."""
DAYS = 3
CYCLES = 50


def add_backup(app: App, volume: str, *extra: str) -> int:
    job = (
        "import os, pathlib, time\n"
        f"p = pathlib.Path({str(app.lines)!r})\n"
        "with p.open('a') as f: f.write(os.environ.get('DOMI_VOLUME_PATH', '-') + '\\n')\n"
    )
    added = app.cli(
        "schedule", "add", f"copy to {volume}", "--cron", "0 0 * * *", "--tz", "UTC",
        "--volume", volume, *extra, "--json", "--", sys.executable, "-c", job,
    )  # fmt: skip
    return int(added["id"])


def test_fifty_plugs_over_three_days_give_three_runs_each_soon_after_the_first_mount(
    app: App, fake_udisks2: FakeUDisks2
) -> None:
    backup = add_backup(app, "Backup")
    archive = add_backup(app, "Archive")
    app.start()
    delays: list[float] = []
    midnight = app.fake_start + timedelta(hours=2)
    cycle = 0
    for day in range(DAYS):
        app.at(midnight + timedelta(days=day, seconds=5))
        app.poke()
        per_day = CYCLES // DAYS + (1 if day < CYCLES % DAYS else 0)
        for hour in range(per_day):
            app.at(midnight + timedelta(days=day, hours=hour, minutes=10))
            fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
            fake_udisks2.plug("sdc1", "Photos", "5555-6666")
            mounted = fake_udisks2.mount("sdb1", "/media/me/Backup")
            fake_udisks2.mount("sdc1", "/media/me/Photos")
            if hour == 0:
                delays.append(app.wait_ran(day + 1) - mounted)
                # Its end recorded before the clock leaves the day: a run the app still saw
                # running at the next midnight would rightly make that due "skipped (busy)".
                _wait_succeeded(app, backup, day + 1)
            fake_udisks2.unplug("sdc1")
            fake_udisks2.unplug("sdb1")
            cycle += 1
    app.poke()
    time.sleep(2)  # a run that should not be would have its moment
    assert cycle == CYCLES
    print(f"mount -> run (s): {', '.join(f'{d:.2f}' for d in delays)}")
    assert app.ran() == ["/media/me/Backup"] * DAYS
    assert max(delays) < MARGIN
    done = [r for r in app.runs(backup) if r["status"] == "succeeded"]
    assert len(done) == DAYS
    assert all(r["reason"].startswith("started after waiting") for r in done)
    assert not [r for r in app.runs(archive) if r["status"] in ("succeeded", "running")]


def _wait_succeeded(app: App, schedule: int, count: int) -> None:
    deadline = time.monotonic() + 2 * MARGIN
    while sum(r["status"] == "succeeded" for r in app.runs(schedule)) < count:
        assert time.monotonic() < deadline, f"run {count} not recorded ended\n{app.log()}"
        time.sleep(0.1)


def test_a_disk_mounted_while_asleep_gives_one_late_run_after_the_resume(
    app: App, fake_udisks2: FakeUDisks2, fake_logind: FakeLogind
) -> None:
    backup = add_backup(app, "Backup")
    app.start()
    assert app.process is not None
    fake_logind.prepare_for_sleep(True)
    app.process.send_signal(signal.SIGSTOP)
    app.at(app.fake_start + timedelta(hours=5))  # asleep across the 00:00 due
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    app.process.send_signal(signal.SIGCONT)
    resumed = fake_logind.prepare_for_sleep(False)
    delay = app.wait_ran(1) - resumed
    print(f"resume -> run: {delay:.2f} s")
    assert delay < MARGIN
    app.poke()
    time.sleep(1)
    (run,) = app.runs(backup)
    assert run["status"] == "succeeded" and run["late"] and run["trigger"] == "catch_up"
    assert app.ran() == ["/media/me/Backup"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for this purpose: it runs nothing and holds no disk.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][:1] != "Z"


def test_a_disk_pulled_mid_run_stops_the_job_tree_and_it_runs_once_more_when_back(
    app: App, fake_udisks2: FakeUDisks2
) -> None:
    pids = app.root / "pids"
    hold = app.root / "hold"
    hold.write_text("")
    job = (
        "import os, pathlib, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"pathlib.Path({str(pids)!r}).write_text(f'{{os.getpid()}} {{child.pid}}')\n"
        f"with open({str(app.lines)!r}, 'a') as f: f.write(os.environ['DOMI_VOLUME_PATH'] + '\\n')\n"
        f"while pathlib.Path({str(hold)!r}).exists(): time.sleep(0.05)\n"
        "child.kill()\n"
    )
    added = app.cli(
        "schedule", "add", "copy", "--cron", "0 0 * * *", "--tz", "UTC", "--volume", "Backup",
        "--stop-if-lost", "--json", "--", sys.executable, "-c", job,
    )  # fmt: skip
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    app.start()
    app.at(app.fake_start + timedelta(hours=2, seconds=5))
    app.poke()
    app.wait_ran(1)
    tree = [int(pid) for pid in pids.read_text().split()]
    pulled = fake_udisks2.unplug("sdb1")
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in tree):
        assert time.monotonic() < deadline, f"job tree {tree} still alive\n{app.log()}"
        time.sleep(0.02)
    print(f"unplug -> job tree gone: {time.monotonic() - pulled:.2f} s")
    hold.unlink()
    fake_udisks2.plug("sdb1", "Backup", "1234-ABCD")
    fake_udisks2.mount("sdb1", "/media/me/Backup")
    app.wait_ran(2)
    app.poke()
    deadline = time.monotonic() + 60
    while len(runs := app.runs(int(added["id"]))) < 2 or runs[0]["status"] == "running":
        assert time.monotonic() < deadline, runs
        time.sleep(0.2)
    again, first = runs
    assert first["status"] == "interrupted"
    assert first["reason"] == "stopped: the disk Backup was unplugged"
    assert again["status"] == "succeeded" and again["trigger"] == "resumed"
    assert app.ran() == ["/media/me/Backup"] * 2
