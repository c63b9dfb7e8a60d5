"""``domi-desktop timeline`` through the real entry point (a subprocess, no app running, its clock
set to the end of the fixture week by libfaketime): the machine's spans and every due, each with
the very line History and the Timeline window give it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from domi_desktop.cron import set_local_resolver
from domi_desktop.store import Store
from domi_desktop.ui.history.dues import due_words
from tests.support.faketime import find_library
from tests.support.timeline_week import END, NOW, RIGA, START, build_week

pytestmark = pytest.mark.linux_only  # libfaketime


@pytest.fixture(autouse=True)
def riga() -> Iterator[None]:
    set_local_resolver(lambda: RIGA)
    yield
    set_local_resolver(None)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    with Store.open(data, now=NOW, machine="laptop") as store:
        build_week(store)
    return data


def domi(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    library = find_library()
    if library is None:
        pytest.skip("libfaketime is not installed (make system-deps)")
    runtime = data.parent / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        "DOMI_DATA_DIR": str(data),
        "DOMI_MACHINE": "laptop",
        "XDG_RUNTIME_DIR": str(runtime),
        "TZ": "Europe/Riga",
        "LD_PRELOAD": str(library),
        "FAKETIME": "@" + NOW.strftime("%Y-%m-%d %H:%M:%S"),
    }
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    return subprocess.run(
        [sys.executable, "-m", "domi_desktop", "timeline", *args],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=60,
    )  # fmt: skip


def test_every_due_of_the_week_has_the_line_history_gives_it(data: Path) -> None:
    done = domi(data, "--days", "7", "--json")
    assert done.returncode == 0, done.stderr
    told = json.loads(done.stdout)
    assert told["machine"] == "laptop"
    assert {span["kind"] for span in told["spans"]} == {"awake", "asleep", "off"}
    cli = {due["run_id"]: due["line"] for s in told["schedules"] for due in s["dues"]}

    with Store.open(data, now=NOW, machine="laptop") as store:
        week = store.timeline(START, END, NOW)
        windows = {story.run.id: due_words(story) for story in week.dues()}
    assert len(cli) == len(windows) == 68
    assert cli == windows


def test_one_schedule_in_words_for_people(data: Path) -> None:
    done = domi(data, "--schedule", "1", "--days", "7")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("laptop: ")
    assert any(line.startswith("  asleep: Tue ") and "(signal)" in line for line in lines)
    assert any(line.startswith("  domi-desktop not running: Sat ") for line in lines)
    assert "Nightly backup" in lines
    assert "Rate-limit report" not in lines
    assert any(
        line.endswith(
            "missed: the laptop was asleep Tue 23:10-Thu 07:02; ran once at Thu 07:03, late"
        )
        for line in lines
    )


def test_a_bad_span_of_days_or_schedule_is_refused_with_a_message(data: Path) -> None:
    too_long = domi(data, "--days", "400")
    assert too_long.returncode != 0 and "days" in too_long.stderr
    unknown = domi(data, "--schedule", "99")
    assert unknown.returncode != 0 and "99" in unknown.stderr


def test_a_machine_with_no_story_yet_says_so_rather_than_awake(tmp_path: Path) -> None:
    done = domi(tmp_path / "fresh", "--days", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        "  nothing on record: domi-desktop has not run on this machine in that time"
    )
